import { z } from 'zod'
import { collectionField, createRecords, maxWriteRecords } from '../data-ops.js'
import { collectionNeed } from '../needs.js'
import { defineOperation } from '../types.js'

/** Creates one record, or each of a list in order, through the records service as the run's principal. */
export const crudCreate = defineOperation({
  type: 'crud_create',
  category: 'data',
  label: 'Create records',
  description: `Creates a record (data an object; output { record }) or several (data a list of up to ${maxWriteRecords}; output { records, count }) as the run's user: the collection's rules, hooks and events apply.`,
  effects: 'writes',
  needs: (config) => collectionNeed(config, 'create'),
  example: {
    collection: 'orders',
    data: { customer: '{{$trigger.body.customer}}', total: '{{$trigger.body.total}}', status: 'new' },
  },
  configSchema: z.strictObject({
    collection: collectionField(),
    data: z
      .union([
        z.record(z.string(), z.unknown()),
        z.array(z.record(z.string(), z.unknown())).min(1).max(maxWriteRecords),
      ])
      .describe(`The record's fields, or a list of up to ${maxWriteRecords} records`),
  }),
  async run(config, ctx) {
    return createRecords(ctx, config.collection, config.data)
  },
})
