import { z } from 'zod'
import { AppError } from '../../../lib/errors.js'
import { defineTool } from '../types.js'

/** get_doc_page: one documentation page as markdown. */
export const getDocPage = defineTool({
  name: 'get_doc_page',
  description: 'One help page as markdown: { slug, title, markdown }. Slugs come from search_docs.',
  inputSchema: z.object({ slug: z.string().min(1).max(200).describe('The page slug (e.g. "records")') }).strict(),
  async run(_principal, args, services) {
    const page = services.docs.page(args.slug)
    if (!page) throw new AppError('not_found', `No documentation page "${args.slug.slice(0, 60)}"`)
    return page
  },
})
