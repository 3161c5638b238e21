import type { Principal } from '../../lib/principal.js'
import type { Opened, Opener, RecordsDeps } from './context.js'
import { rowsInScope, softDeleteRows } from './data-store.js'
import type { ApiRecord } from './events.js'
import { fullRecord } from './present.js'
import { cascadeDelete } from './relations.js'

/** At most this many ids per bulk delete (core-api § Limits). */
export const bulkDeleteLimit = 200

/**
 * DELETE /records/bulk: many records deleted as the single delete would delete each, with one opening of
 * the collection. Ids outside the caller's delete scope, unknown or (soft delete) already deleted are
 * not counted; nothing about them is revealed.
 */
export function createBulkDelete(deps: RecordsDeps, open: Opener) {
  function emitDelete(opened: Opened, before: ApiRecord, permanent: boolean): void {
    deps.events.emit('record.delete', {
      projectId: opened.collection.projectId,
      collection: opened.collection.name,
      before,
      after: null,
      actor: { kind: opened.principal.kind, userId: opened.principal.userId },
      at: deps.clock.seconds(),
      permanent,
      principal: opened.principal,
    })
  }

  return {
    /**
     * Deletes the records with these ids that the caller may delete and returns how many were deleted.
     * Every blocking hook and every `restrict` relation is checked for all of them before anything is
     * written, so a refusal (a hook's error, 409 conflict) deletes nothing. A soft delete is then one
     * statement; a permanent one (also reaching soft-deleted records) removes each record in turn with
     * its relation cascade and shares. Throws unauthorized, forbidden, collection_not_found, conflict.
     */
    async delete(principal: Principal, name: string, ids: readonly string[], permanent: boolean): Promise<number> {
      const opened = await open(principal, name, 'delete')
      const rows = await rowsInScope(opened, [...new Set(ids)], permanent)
      if (rows.length === 0) return 0
      const before = new Map(rows.map((row) => [String(row.id), fullRecord(opened.shape, row)]))
      for (const record of before.values()) {
        await deps.hooks.run({ action: 'delete', collection: opened.collection, principal, before: record, data: {} })
      }
      // A soft delete changes no reference, so this only checks `restrict` (and writes nothing).
      for (const id of before.keys()) await cascadeDelete(deps, opened, id, false)

      if (!permanent) {
        const now = deps.clock.seconds()
        const deleted = await softDeleteRows(opened, [...before.keys()], { deleted_at: now, updated_at: now, updated_by: principal.userId })
        for (const row of deleted) emitDelete(opened, before.get(String(row.id)) ?? fullRecord(opened.shape, row), false)
        return deleted.length
      }
      let count = 0
      for (const [id, record] of before) {
        await cascadeDelete(deps, opened, id, true)
        if (!(await opened.store.remove(id, opened.scope.rows))) continue
        await deps.shares.deleteOfRecord(opened.collection.id, id)
        emitDelete(opened, record, true)
        count++
      }
      return count
    },
  }
}

export type BulkDelete = ReturnType<typeof createBulkDelete>
