import { z } from 'zod'
import { visibleCollection } from '../collection-view.js'
import { defineTool } from '../types.js'

/** list_collection_records: a collection's records in keyset pages (addendum §7 cursor mode). */
export const listCollectionRecords = defineTool({
  name: 'list_collection_records',
  description:
    'List the records of one collection page by page. Omit cursor for the first page, then pass cursors.next. Returns { records, cursors: { next, previous }, hasMore }; only rows and fields the key may read.',
  inputSchema: z
    .object({
      collection: z.string().min(1).max(100).describe('Collection name'),
      cursor: z
        .string()
        .max(2000)
        .optional()
        .describe('cursors.next (or previous) of an earlier page; omit for the first page'),
      limit: z.number().int().min(1).max(100).optional().describe('Records per page (default 25, max 100)'),
    })
    .strict(),
  async run(principal, args, services) {
    const collection = await visibleCollection(principal, args.collection, services)
    // An empty cursor switches the list to keyset mode from the first row (addendum §7).
    const page = await services.records.list(principal, collection.name, {
      page: 1,
      limit: args.limit ?? 25,
      cursor: args.cursor ?? '',
    })
    return { records: page.data, cursors: page.cursors ?? { next: null, previous: null }, hasMore: page.hasMore }
  },
})
