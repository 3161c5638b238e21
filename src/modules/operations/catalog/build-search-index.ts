import { z } from 'zod'
import type { Principal } from '../../../lib/principal.js'
import { text } from '../schema-helpers.js'
import { defineOperation, type OperationContext } from '../types.js'
import { throughService } from '../service-call.js'

/** What build_search_index needs of `ctx.services` (app.ts wires the search indexes service). */
export interface SearchIndexServices {
  readonly searchIndexes: {
    build(
      principal: Principal,
      name: string,
      signal?: AbortSignal,
    ): Promise<{
      name: string
      status: string
      builtAt: number | null
      documentCount: number
      sizeBytes: number
      buildId: string | null
    }>
  }
}

function searchIndexesOf(ctx: OperationContext): SearchIndexServices['searchIndexes'] {
  return ctx.services.searchIndexes
}

/**
 * Compiles a search index from its source collections into an SQLite FTS5 file in object storage, as the
 * run's principal (row and column rules apply: the file holds what the run may read), and waits for it.
 */
export const buildSearchIndex = defineOperation({
  type: 'build_search_index',
  category: 'data',
  label: 'Build search index',
  description:
    "Compiles a search index from its source collections into an object-storage SQLite FTS5 file, as the run's user; output { indexName, status, builtAt, documentCount, sizeBytes, buildId }.",
  effects: 'writes',
  // Its source collections are read as the run's user too; they are the index's, not the step's.
  needs: () => [{ resource: 'system/search-indexes', action: 'execute' }],
  example: { indexName: 'articles_search' },
  configSchema: z.strictObject({
    indexName: text(100, 1).describe("The search index's name"),
  }),
  async run(config, ctx) {
    const indexes = searchIndexesOf(ctx)
    const built = await throughService(() => indexes.build(ctx.principal, config.indexName, ctx.signal))
    return {
      indexName: built.name,
      status: built.status,
      builtAt: built.builtAt,
      documentCount: built.documentCount,
      sizeBytes: built.sizeBytes,
      buildId: built.buildId,
    }
  },
})
