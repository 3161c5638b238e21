import { z } from 'zod'
import { filterText, visibleCollection } from '../collection-view.js'
import { defineTool } from '../types.js'

export const filterArgument = z
  .union([z.string().max(16_384), z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .describe(
    'A filter, object format ({ "status": { "_eq": "open" } }) or array format, as the records list takes it; JSON text also accepted',
  )

/** search_records: a page of records matching a filter and/or a full-text search, as the key may read them. */
export const searchRecords = defineTool({
  name: 'search_records',
  description:
    'Search the records of one collection with a filter and/or a full-text search. Returns { records, total, hasMore }; only rows and fields the key may read.',
  inputSchema: z
    .object({
      collection: z.string().min(1).max(100).describe('Collection name'),
      filter: filterArgument.optional(),
      search: z.string().min(1).max(500).optional().describe('Full-text search over the text fields'),
      limit: z.number().int().min(1).max(100).optional().describe('At most this many records (default 25, max 100)'),
    })
    .strict(),
  async run(principal, args, services) {
    const collection = await visibleCollection(principal, args.collection, services)
    const page = await services.records.list(principal, collection.name, {
      page: 1,
      limit: args.limit ?? 25,
      filter: filterText(args.filter),
      search: args.search,
    })
    return { records: page.data, total: page.total, hasMore: page.hasMore }
  },
})
