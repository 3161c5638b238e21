import type { Principal } from '../../lib/principal.js'
import type { Opener, RecordsDeps } from './context.js'
import { rowsInScope, softDeleteRows } from './data-store.js'
import { createWritePipeline, type Committed, type WriteIntent } from './pipeline.js'
import { fullRecord } from './present.js'
import { noteWritten } from './written.js'
import { applyCascade, cascadeIntents, planCascade } from './relations.js'

/** At most this many ids per bulk delete (core-api § Limits). */
export const bulkDeleteLimit = 200

/**
 * DELETE /records/bulk: many records deleted as the single delete would delete each, with one opening of
 * the collection. Ids outside the caller's delete scope, unknown or (soft delete) already deleted are
 * not counted; nothing about them is revealed.
 */
export function createBulkDelete(deps: RecordsDeps, open: Opener) {
  const pipeline = createWritePipeline(deps)

  return {
    /**
     * Deletes the records with these ids that the caller may delete and returns how many were deleted.
     * The relation cascade of all of them is planned (every `restrict` checked) and every blocking hook
     * run, once per record deleted or cleared, before anything is written, so a refusal (a hook's error,
     * 409 conflict) deletes nothing. A soft delete is then one statement; a permanent one (also reaching
     * soft-deleted records) writes the cascade and removes each record with its shares.
     * Throws unauthorized, forbidden, collection_not_found, conflict, or what a hook throws.
     */
    async delete(principal: Principal, name: string, ids: readonly string[], permanent: boolean): Promise<number> {
      const opened = await open(principal, name, 'delete')
      const rows = await rowsInScope(opened, [...new Set(ids)], permanent)
      if (rows.length === 0) return 0
      const before = new Map(rows.map((row) => [String(row.id), fullRecord(opened.shape, row)]))
      // A soft delete changes no reference, so its plan only checks `restrict` (and holds no write).
      const plan = await planCascade(deps, opened.collection, [...before.keys()], permanent)
      const own = [...before.values()].map(
        (record): WriteIntent => ({ action: 'delete', collection: opened.collection, before: record, data: {} }),
      )
      const deleted = await pipeline.run(principal, [...own, ...cascadeIntents(plan)], async (data) => {
        if (!permanent) {
          const now = deps.clock.seconds()
          const deleted = await softDeleteRows(opened, [...before.keys()], {
            deleted_at: now,
            updated_at: now,
            updated_by: principal.userId,
          })
          const committed = deleted.map(
            (row): Committed => ({
              type: 'record.delete',
              collection: opened.collection,
              before: before.get(String(row.id)) ?? fullRecord(opened.shape, row),
              permanent: false,
            }),
          )
          return { committed, result: deleted.length }
        }
        const committed = await applyCascade(plan, data.slice(own.length), deps.clock.seconds())
        let count = 0
        for (const [id, record] of before) {
          if (!(await opened.store.remove(id, opened.scope.rows))) continue
          await deps.shares.deleteOfRecord(opened.collection.id, id)
          committed.push({ type: 'record.delete', collection: opened.collection, before: record, permanent: true })
          count++
        }
        return { committed, result: count }
      })
      noteWritten(deps, opened, deleted)
      return deleted
    },
  }
}

export type BulkDelete = ReturnType<typeof createBulkDelete>
