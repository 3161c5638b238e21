import { z } from 'zod'
import {
  collectionField,
  fieldsField,
  filterField,
  limitField,
  offsetField,
  readRecords,
  sortField,
} from '../data-ops.js'
import { collectionNeed } from '../needs.js'
import { defineOperation } from '../types.js'

/** Reads records by filter, sort, offset and limit through the records service as the run's principal. */
export const crudRead = defineOperation({
  type: 'crud_read',
  category: 'data',
  label: 'Read records',
  description:
    "Reads the records the run's user may see (filter, sort, limit 1-1000, offset, fields); output { records, count, hasMore }.",
  effects: 'reads',
  needs: (config) => collectionNeed(config, 'read'),
  example: {
    collection: 'orders',
    filter: { status: { _eq: 'new' }, owner: { _eq: '$CURRENT_USER' } },
    sort: [{ field: 'created_at', order: 'desc' }],
    limit: 10,
    fields: ['customer', 'total'],
  },
  configSchema: z.strictObject({
    collection: collectionField(),
    filter: filterField().optional(),
    sort: sortField().optional(),
    limit: limitField(1000, 25),
    offset: offsetField(),
    fields: fieldsField('The fields to answer (system fields always); every readable one when absent').optional(),
  }),
  async run(config, ctx) {
    return readRecords(ctx, config.collection, config)
  },
})
