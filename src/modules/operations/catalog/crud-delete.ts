import { z } from 'zod'
import {
  collectionField,
  deleteRecords,
  filterField,
  idField,
  idsField,
  maxWriteRecords,
  oneTarget,
  permanentField,
} from '../data-ops.js'
import { collectionNeed } from '../needs.js'
import { defineOperation } from '../types.js'

/** Deletes records by id, ids or filter through the records service as the run's principal. */
export const crudDelete = defineOperation({
  type: 'crud_delete',
  category: 'data',
  label: 'Delete records',
  description: `Deletes one record (id), several (ids) or those matching a filter (at most ${maxWriteRecords}) as the run's user, soft unless permanent; output { ids, count }.`,
  effects: 'writes',
  needs: (config) => collectionNeed(config, 'delete'),
  example: { collection: 'orders', filter: { status: { _eq: 'draft' }, owner: { _eq: '$CURRENT_USER' } } },
  configSchema: z
    .strictObject({
      collection: collectionField(),
      id: idField().optional(),
      ids: idsField().optional(),
      filter: filterField().optional(),
      permanent: permanentField(),
    })
    .superRefine(oneTarget),
  async run(config, ctx) {
    return deleteRecords(ctx, config.collection, config, config.permanent)
  },
})
