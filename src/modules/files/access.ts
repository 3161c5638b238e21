import { AppError } from '../../lib/errors.js'
import { evaluateFilter } from '../../lib/filter/index.js'
import { idPattern } from '../../lib/ids.js'
import { principals, type Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import { ownerOf, toWire, type FileRow } from './model.js'
import type { FilesStore, Sight } from './store.js'

export const FILES_RESOURCE = 'system/files'

function notFound(): AppError {
  return new AppError('not_found', 'File not found')
}

/**
 * The ownership and visibility rules of core-api § File endpoints, in one place:
 * - a public file is seen by every caller the route let in (system/files:read or more);
 * - a private file only by its uploader; others get 404 and never see it listed. Roles with admin access,
 *   super_admin and service keys (which act for the system, as for records) bypass;
 * - confirm-upload and variants are the uploader's alone (403 for anyone else, administrators included);
 * - update and delete stay inside the grant's item_filter, evaluated over the file object (camelCase).
 */
export function createFileAccess(access: AccessService, store: FilesStore) {
  /** What the caller sees; a capped caller (a flow run under its publisher) only what it and its ceiling both see. */
  async function sightOf(principal: Principal): Promise<Sight> {
    const serviceKey = principal.kind === 'api_key' && principal.userId === null
    const own: Sight = {
      owner: ownerOf(principal),
      bypass: serviceKey || (await access.hasAdminAccess(principals.uncapped(principal))),
    }
    if (principal.ceiling === null) return own
    const below = await sightOf(principal.ceiling)
    if (own.bypass) return below
    if (below.bypass || below.owner === own.owner) return own
    // Two different people: only public files are seen by both.
    return { owner: null, bypass: false }
  }

  function sees(sight: Sight, row: FileRow): boolean {
    return row.visibility === 'public' || sight.bypass || (sight.owner !== null && row.owner === sight.owner)
  }

  /** The rows the caller may update or delete (the grant's item_filter over the file object); null when the action is not granted at all. */
  async function scopeOf(
    principal: Principal,
    action: 'update' | 'delete',
  ): Promise<((row: FileRow) => boolean) | null> {
    const decision = await access.decide(principal, FILES_RESOURCE, action)
    if (!decision.allowed) return null
    const filter = decision.itemFilter
    return filter === null
      ? () => true
      : (row) => evaluateFilter(filter, toWire(row) as unknown as Record<string, unknown>)
  }

  return {
    sightOf,
    sees,

    /**
     * Which of these ids name files the caller may read: those GET /:id would show it (system/files:read,
     * and the file is its project's and visible to it). Missing, foreign and hidden ids are simply absent.
     */
    async readable(principal: Principal, ids: readonly string[]): Promise<Set<string>> {
      const wanted = [...new Set(ids.filter((id) => idPattern.test(id)))]
      if (wanted.length === 0 || !(await access.decide(principal, FILES_RESOURCE, 'read')).allowed) return new Set()
      const sight = await sightOf(principal)
      return new Set(
        (await store.byIds(principal.projectId, wanted)).filter((row) => sees(sight, row)).map((row) => row.id),
      )
    },

    /**
     * Of these files, those the caller could delete through DELETE /:id: files of its project it sees,
     * inside its system/files:delete grant (and its item_filter). None without that grant.
     */
    async deletable(principal: Principal, rows: readonly FileRow[]): Promise<FileRow[]> {
      if (rows.length === 0) return []
      const inScope = await scopeOf(principal, 'delete')
      if (!inScope) return []
      const sight = await sightOf(principal)
      return rows.filter((row) => row.project_id === principal.projectId && sees(sight, row) && inScope(row))
    },

    /** A file the caller may see, pending or complete. Throws not_found (missing, another project's, or private and not yours). */
    async visible(principal: Principal, id: string): Promise<FileRow> {
      if (!idPattern.test(id)) throw notFound()
      const row = await store.byId(principal.projectId, id)
      if (!row || !sees(await sightOf(principal), row)) throw notFound()
      return row
    },

    /** Throws forbidden unless the caller uploaded the file (its user, or the very service key). */
    assertOwner(principal: Principal, row: FileRow, what: string): void {
      for (let layer: Principal | null = principal; layer !== null; layer = layer.ceiling) {
        const owner = ownerOf(layer)
        if (owner === null || owner !== row.owner) throw new AppError('forbidden', `Only the uploader may ${what}`)
      }
    },

    /** The row scope of the caller for an action on files, as a test of one file; throws forbidden when the action is not granted at all. */
    async scopeFor(principal: Principal, action: 'update' | 'delete'): Promise<(row: FileRow) => boolean> {
      const inScope = await scopeOf(principal, action)
      if (!inScope)
        throw new AppError('forbidden', `Missing permission ${FILES_RESOURCE}:${action}`, {
          resource: FILES_RESOURCE,
          action,
        })
      return inScope
    },

    /** Throws forbidden when the file lies outside the rows the caller may update or delete. */
    async assertInScope(principal: Principal, row: FileRow, action: 'update' | 'delete'): Promise<void> {
      const inScope = await this.scopeFor(principal, action)
      if (!inScope(row))
        throw new AppError('forbidden', `This file is outside the files you may ${action}`, {
          resource: FILES_RESOURCE,
          action,
        })
    },
  }
}

export type FileAccess = ReturnType<typeof createFileAccess>
