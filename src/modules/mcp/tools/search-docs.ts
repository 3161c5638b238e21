import { z } from 'zod'
import { defineTool } from '../types.js'

/** search_docs: ranked full-text search over the project's documentation pages. */
export const searchDocs = defineTool({
  name: 'search_docs',
  description:
    'Search the help pages (the project documentation). Returns { results: [{ slug, title, snippet, score }] }, best first; read one with get_doc_page.',
  inputSchema: z.object({ query: z.string().min(1).max(500).describe('Words to look for') }).strict(),
  async run(_principal, args, services) {
    return { results: services.docs.search(args.query, 10) }
  },
})
