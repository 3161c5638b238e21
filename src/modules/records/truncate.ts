import { AppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { Opener } from './context.js'
import { deleteAllRows, holdsReferences } from './data-store.js'
import type { Freshness } from './freshness.js'
import type { DependentIndexes } from './search-indexes.js'
import type { SharesStore } from './shares-store.js'

export interface TruncateResult {
  success: true
  deleted: number
  /** Compiled search indexes drawing from the collection, now stale (they serve their old rows until rebuilt). */
  staleSearchIndexes: string[]
}

export interface TruncateDeps {
  open: Opener
  collections: Pick<CollectionsService, 'list' | 'handleOf'>
  shares: SharesStore
  audit: AuditService
  /** Truncate is one statement outside the write pipeline: it moves the write version itself. */
  freshness: Pick<Freshness, 'bump'>
  searchIndexes: Pick<DependentIndexes, 'markStale'>
}

/**
 * POST /collections/:name/truncate: every record of a collection removed at once, soft-deleted ones
 * included, with nothing else touched: the schema, the grants, hooks and files stay. No recycle bin.
 */
export function createTruncate(deps: TruncateDeps) {
  /** `collection.field` of every relation of another collection that still points at records here. */
  async function referencesInto(projectId: string, name: string): Promise<string[]> {
    const found: string[] = []
    for (const other of await deps.collections.list(projectId)) {
      if (other.name === name) continue
      const fields = other.fields.filter((f) => f.type === 'relation' && f.relationConfig?.targetCollection === name)
      if (fields.length === 0) continue
      const handle = await deps.collections.handleOf(other)
      for (const field of fields) {
        if (await holdsReferences(handle, other, field.name, field.relationConfig!.relationType === 'hasMany'))
          found.push(`${other.name}.${field.name}`)
      }
    }
    return found
  }

  return {
    /**
     * Deletes every row and the shares of those records; answers how many rows went. Needs hard_delete
     * over every row: a grant limited by item_filter (or, without admin access, a private collection's
     * owner scoping) is refused. Throws unauthorized, forbidden, collection_not_found, conflict (records
     * of another collection still reference records here).
     */
    async truncate(principal: Principal, name: string): Promise<TruncateResult> {
      const opened = await deps.open(principal, name, 'hard_delete')
      if (opened.scope.rows !== null) {
        throw new AppError(
          'forbidden',
          `Truncate removes every record of ${name}: it needs collections/${name}:hard_delete without a row restriction`,
          {
            resource: `collections/${name}`,
            action: 'hard_delete',
          },
        )
      }
      // Dangling references would outlive the truncate (relations' onDelete runs per record, not here).
      const referencing = await referencesInto(opened.collection.projectId, name)
      if (referencing.length > 0) {
        throw new AppError(
          'conflict',
          `Records of other collections still reference ${name} (${referencing.join(', ')}); clear those references or truncate those collections first`,
          {
            referencing,
          },
        )
      }
      const deleted = await deleteAllRows(opened.handle, name)
      // Cached totals and ETags of the collection go stale everywhere before the truncate is answered.
      await deps.freshness.bump([opened.collection])
      await deps.shares.deleteOfCollection(opened.collection.id)
      await deps.audit.record({
        projectId: opened.collection.projectId,
        action: 'collection.truncated',
        actor: principal,
        target: { type: 'collection', id: opened.collection.id },
        details: { name, deleted },
      })
      const staleSearchIndexes = await deps.searchIndexes.markStale(opened.collection.projectId, name)
      return { success: true, deleted, staleSearchIndexes }
    },
  }
}

export type Truncate = ReturnType<typeof createTruncate>
