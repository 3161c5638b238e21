import { z } from 'zod'
import { filterText, visibleCollection } from '../collection-view.js'
import { defineTool } from '../types.js'
import { filterArgument } from './search-records.js'

/** Groups answered at most; more are cut off (hasMore says so). */
const maxGroups = 1000

/** aggregate_records: how many records match, optionally per value of one field, over the rows the key may read. */
export const aggregateRecords = defineTool({
  name: 'aggregate_records',
  description:
    'Count the records of one collection matching an optional filter, optionally grouped by one field. Returns { count } or { groups: [{ value, count }], hasMore }; only rows the key may read, and only a field it may read can group.',
  inputSchema: z
    .object({
      collection: z.string().min(1).max(100).describe('Collection name'),
      filter: filterArgument.optional(),
      groupBy: z.string().min(1).max(100).optional().describe('A field to group by'),
    })
    .strict(),
  async run(principal, args, services) {
    const collection = await visibleCollection(principal, args.collection, services)
    const groupBy = args.groupBy === undefined ? [] : [args.groupBy]
    const { data, hasMore } = await services.records.aggregate(principal, collection.name, {
      filter: filterText(args.filter),
      groupBy,
      limit: maxGroups,
    })
    if (args.groupBy === undefined) return { count: Number(data[0]?.count ?? 0) }
    const field = args.groupBy
    return { groups: data.map((row) => ({ value: row[field] ?? null, count: Number(row.count ?? 0) })), hasMore }
  },
})
