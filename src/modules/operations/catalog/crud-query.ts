import { z } from 'zod'
import {
  aggregateField,
  collectionField,
  fieldsField,
  filterField,
  groupByField,
  limitField,
  queryRecords,
  sortField,
} from '../data-ops.js'
import { collectionNeed } from '../needs.js'
import { defineOperation } from '../types.js'

/** Groups and aggregates (compiled to SQL), or selected fields of records, through the records service as the run's principal. */
export const crudQuery = defineOperation({
  type: 'crud_query',
  category: 'data',
  label: 'Query records',
  description:
    "Counts, sums, averages, minimums and maximums per group (groupBy, aggregate; compiled to one SQL query) or selected fields of records, over what the run's user may read; output { rows, count, hasMore }.",
  effects: 'reads',
  needs: (config) => collectionNeed(config, 'read'),
  example: {
    collection: 'orders',
    filter: { status: { _in: ['new', 'paid'] } },
    groupBy: ['status'],
    aggregate: [{ fn: 'count' }, { fn: 'sum', field: 'total' }, { fn: 'avg', field: 'total', as: 'average' }],
    sort: [{ field: 'count', order: 'desc' }],
  },
  configSchema: z.strictObject({
    collection: collectionField(),
    select: fieldsField('Fields to answer: of the records, or (grouped) which groupBy fields to show').optional(),
    filter: filterField().optional(),
    groupBy: groupByField().optional(),
    aggregate: aggregateField().optional(),
    sort: sortField().optional(),
    limit: limitField(10_000, 100),
  }),
  async run(config, ctx) {
    return queryRecords(ctx, config.collection, config)
  },
})
