import { AppError } from '../../lib/errors.js'
import { idPattern } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { FilesContext } from './context.js'
import { isResizable, limits, toWire, type FileRow, type FileWire } from './model.js'

export interface RegenerateResult {
  id: string
  filename: string
  status: 'regenerated' | 'skipped' | 'failed' | 'out_of_scope'
  /** Why a file was skipped, failed or out of scope; null when regenerated. */
  reason: string | null
}

export interface RegeneratePage {
  limit: number
  cursor: string | null
  processed: number
  regenerated: number
  skipped: number
  failed: number
  outOfScope: number
  results: RegenerateResult[]
  nextCursor: string | null
  hasMore: boolean
  /** Files in the whole run, counted on the first page only; null on resumed pages. */
  total: number | null
}

export interface RegenerateInput {
  cursor?: string | null
  limit?: number
  /** A container id (the files uploaded into it) or a collection name (the files attached to it, `__system` for unattached ones); a container wins. */
  containerId?: string | null
}

/** POST /files/:id/regenerate and POST /files/regenerate: variants made again, now, whatever the strategy stored before. */
export function createRegenerate(ctx: FilesContext) {
  const { deps, store, access, variants } = ctx

  async function run(row: FileRow): Promise<RegenerateResult> {
    const done = (status: RegenerateResult['status'], reason: string | null): RegenerateResult => ({
      id: row.id,
      filename: row.filename,
      status,
      reason,
    })
    if (!isResizable(row.mime_type)) return done('skipped', 'not a JPEG or PNG image')
    if ((await deps.settings.get(row.project_id, 'files.strategy')) === 'edge_cache_only') {
      return done('skipped', "the project's strategy is edge_cache_only, which stores no variants")
    }
    try {
      const after = await variants.generate(row)
      return after ? done('regenerated', null) : done('skipped', 'the file was replaced or deleted meanwhile')
    } catch (err) {
      deps.log.warn({ err, fileId: row.id }, 'file variant regeneration failed')
      return done('failed', (err instanceof Error ? err.message : 'variant generation failed').slice(0, 200))
    }
  }

  return {
    /**
     * Makes one file's variants again (synchronously). Throws not_found, forbidden (outside the update
     * grant's item_filter), invalid_request (upload never completed).
     */
    async regenerateOne(principal: Principal, id: string): Promise<RegenerateResult & { file: FileWire }> {
      const row = await access.visible(principal, id)
      await access.assertInScope(principal, row, 'update')
      if (row.status !== 'complete')
        throw new AppError('invalid_request', 'This upload was never completed; confirm it first')
      const result = await run(row)
      const after = await store.byId(row.project_id, row.id)
      return { ...result, file: toWire(after ?? row) }
    },

    /**
     * One page of a regeneration over the caller's visible complete files, in id order: files outside the
     * update grant's item_filter are counted as outOfScope and left alone. Throws invalid_request (bad cursor or limit).
     */
    async regenerate(principal: Principal, input: RegenerateInput): Promise<RegeneratePage> {
      const cursor = input.cursor === undefined || input.cursor === '' ? null : input.cursor
      if (cursor !== null && !idPattern.test(cursor))
        throw new AppError('invalid_request', 'cursor must be a nextCursor this endpoint answered', { field: 'cursor' })
      const limit = Math.min(input.limit ?? limits.regeneratePageDefault, limits.regeneratePageMax)
      const sight = await access.sightOf(principal)
      const inScope = await access.scopeFor(principal, 'update')
      // A container of the project with this id wins over a collection of that name (decision 066).
      const named = input.containerId ?? null
      const container = named === null ? undefined : await deps.containerRules?.(principal.projectId, named)
      const page = await store.pageById(principal.projectId, sight, {
        after: cursor,
        limit: limit + 1,
        collection: container ? null : named,
        ...(container ? { container: container.id } : {}),
        count: cursor === null,
      })
      const hasMore = page.rows.length > limit
      const rows = page.rows.slice(0, limit)
      const results: RegenerateResult[] = []
      for (const row of rows) {
        results.push(
          inScope(row)
            ? await run(row)
            : {
                id: row.id,
                filename: row.filename,
                status: 'out_of_scope',
                reason: 'outside the files you may update',
              },
        )
      }
      const count = (status: RegenerateResult['status']) => results.filter((r) => r.status === status).length
      return {
        limit,
        cursor,
        processed: results.length,
        regenerated: count('regenerated'),
        skipped: count('skipped'),
        failed: count('failed'),
        outOfScope: count('out_of_scope'),
        results,
        nextCursor: hasMore ? rows.at(-1)!.id : null,
        hasMore,
        total: page.total,
      }
    },
  }
}
