import { z } from 'zod'
import {
  aggregateField,
  collectionField,
  createRecords,
  deleteRecords,
  fieldsField,
  filterField,
  groupByField,
  idField,
  idsField,
  limitField,
  maxWriteRecords,
  offsetField,
  permanentField,
  queryRecords,
  readRecords,
  sortField,
  updateRecords,
} from '../data-ops.js'
import { collectionNeed, literalText } from '../needs.js'
import { defineOperation } from '../types.js'

/**
 * One of create, read, update, delete, query chosen by `action`, with the fields of each (crud_create …
 * crud_query), through the records service as the run's principal.
 */
export const crudAction = defineOperation({
  type: 'crud_action',
  category: 'data',
  label: 'Records action',
  description:
    "Creates, reads, updates, deletes or queries (groupBy, aggregate) records as the run's user, as the action says; output that of crud_create, crud_read, crud_update, crud_delete or crud_query.",
  // It may write; read and query only read (a dry run runs those). An action given by a template may write.
  effects: 'writes',
  effectsNote: 'reads when action is read or query',
  effectsWhen: (config) => (readOnly(actionOf(config)) ? 'reads' : 'writes'),
  needs: (config) => {
    const action = actionOf(config)
    return action === null ? [] : collectionNeed(config, readOnly(action) ? 'read' : action)
  },
  example: { collection: 'orders', action: 'update', filter: { status: { _eq: 'new' } }, data: { status: 'queued' } },
  configSchema: z
    .strictObject({
      collection: collectionField(),
      action: z.enum(['create', 'read', 'update', 'delete', 'query']).default('read').describe('What to do'),
      data: z
        .union([
          z.record(z.string(), z.unknown()),
          z.array(z.record(z.string(), z.unknown())).min(1).max(maxWriteRecords),
        ])
        .optional()
        .describe('create: the record (or a list); update: the fields to change'),
      id: idField().optional(),
      ids: idsField().optional(),
      filter: filterField().optional(),
      sort: sortField().optional(),
      limit: limitField(10_000, 25),
      offset: offsetField(),
      fields: fieldsField('read: the fields to answer').optional(),
      select: fieldsField('query: the fields (or groupBy fields) to answer').optional(),
      groupBy: groupByField().optional(),
      aggregate: aggregateField().optional(),
      permanent: permanentField(),
    })
    .superRefine((config, ctx) => {
      if (config.action === 'create' && config.data === undefined)
        ctx.addIssue({ code: 'custom', path: ['data'], message: 'create needs data' })
      if (config.action === 'update' && (config.data === undefined || Array.isArray(config.data)))
        ctx.addIssue({ code: 'custom', path: ['data'], message: 'update needs data (an object)' })
      if (config.action === 'update' || config.action === 'delete') {
        const given = (['id', 'ids', 'filter'] as const).filter((key) => config[key] !== undefined)
        if (given.length !== 1)
          ctx.addIssue({
            code: 'custom',
            path: ['id'],
            message: `${config.action} needs exactly one of id, ids or filter`,
          })
      }
    }),
  async run(config, ctx) {
    const { collection } = config
    switch (config.action) {
      case 'create':
        return createRecords(ctx, collection, config.data!)
      case 'read':
        return readRecords(ctx, collection, config)
      case 'update':
        return updateRecords(ctx, collection, config.data as Record<string, unknown>, config)
      case 'delete':
        return deleteRecords(ctx, collection, config, config.permanent)
      case 'query':
        return queryRecords(ctx, collection, config)
    }
  },
})

/** The action as saved: read when left out (the default), null when a template chooses it. */
function actionOf(config: Readonly<Record<string, unknown>>): string | null {
  return config.action === undefined ? 'read' : literalText(config.action)
}

const readOnly = (action: string | null): boolean => action === 'read' || action === 'query'
