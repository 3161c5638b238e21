import { z } from 'zod'
import {
  collectionField,
  filterField,
  idField,
  idsField,
  maxWriteRecords,
  oneTarget,
  updateRecords,
} from '../data-ops.js'
import { collectionNeed } from '../needs.js'
import { defineOperation } from '../types.js'

/** Updates records by id, ids or filter through the records service as the run's principal. */
export const crudUpdate = defineOperation({
  type: 'crud_update',
  category: 'data',
  label: 'Update records',
  description: `Updates one record (id), several (ids) or those matching a filter (at most ${maxWriteRecords}) with data (fields and $set/$push/$pull/$unset) as the run's user; output { records, count }.`,
  effects: 'writes',
  needs: (config) => collectionNeed(config, 'update'),
  example: {
    collection: 'orders',
    id: '{{$steps.create_order.record.id}}',
    data: { status: 'paid', $push: { tags: 'invoiced' } },
  },
  configSchema: z
    .strictObject({
      collection: collectionField(),
      data: z
        .record(z.string(), z.unknown())
        .describe('The fields to change (and JSON operators), as PATCH /records/:id'),
      id: idField().optional(),
      ids: idsField().optional(),
      filter: filterField().optional(),
    })
    .superRefine(oneTarget),
  async run(config, ctx) {
    return updateRecords(ctx, config.collection, config.data, config)
  },
})
