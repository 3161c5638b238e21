import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { requirePerson, type Principal } from '../../lib/principal.js'
import type { CollectionsService } from '../collections/index.js'
import type { UsersService } from '../users/index.js'
import type { Opened, Opener } from './context.js'
import type { ShareAccess } from './scope.js'
import type { ShareRow, SharesStore } from './shares-store.js'

export interface Share {
  id: string
  recordId: string
  userId: string
  access: ShareAccess
  createdAt: number
}

function toShare(row: ShareRow): Share {
  return {
    id: row.id,
    recordId: row.record_id,
    userId: row.user_id,
    access: row.access as ShareAccess,
    createdAt: row.created_at,
  }
}

/**
 * Record shares (addendum §4): on a collection with `sharing: true`, a record's effective owner (or an
 * administrator) shares it with a person of the project at view, comment or edit. Creating, changing or
 * removing a share also needs update on that record, and a share never opens more than its giver reaches
 * (decision 012).
 */
export function createSharesService(deps: {
  open: Opener
  store: SharesStore
  users: UsersService
  collections: CollectionsService
  clock: Clock
}) {
  /** The record, read as the caller, which must be its effective owner or an administrator. Throws unauthorized, record_not_found, forbidden, invalid_request. */
  async function ownedRecord(principal: Principal, name: string, recordId: string): Promise<Opened> {
    // Shares are between people: an anonymous caller has none to manage, whatever the collection's preset.
    if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to manage shares')
    const opened = await deps.open(principal, name, 'read')
    if (opened.collection.accessControl?.sharing !== true)
      throw new AppError('invalid_request', `Sharing is off for ${name}`)
    const row = await opened.store.byId(recordId, opened.scope.rows, false)
    if (!row) throw new AppError('record_not_found', 'Record not found')
    const owner = (row.owned_by ?? row.created_by) as string | null
    if (!opened.scope.admin && (owner === null || owner !== principal.userId)) {
      throw new AppError('forbidden', "Only the record's owner or an administrator may manage its shares")
    }
    return opened
  }

  /**
   * Throws unless the caller may change this record's shares (decision 012): it must hold update over the
   * record (an API key's capabilities included, so a read-only key of the owner shares nothing), and a share
   * opens whole records, so the caller may not be limited to some columns for what the share opens (reading
   * for every level; updating too for edit). `comment` needs what a comment capability token needs, read
   * and update, and opens reading. `access` is null for a removal, which needs update alone.
   */
  async function assertMayShare(
    principal: Principal,
    read: Opened,
    recordId: string,
    access: ShareAccess | null,
  ): Promise<void> {
    const resource = `collections/${read.collection.name}`
    // Throws forbidden naming collections/<name>:update when the caller (or its key) holds no update at all.
    const update = await deps.open(principal, read.collection.name, 'update')
    if (!(await update.store.byId(recordId, update.scope.rows, false))) {
      throw new AppError('forbidden', 'You may change the shares only of a record you may update', {
        resource,
        action: 'update',
      })
    }
    if (access === null) return
    const limited =
      read.scope.fields !== null ? 'read' : access === 'edit' && update.scope.fields !== null ? 'update' : null
    if (limited !== null) {
      throw new AppError(
        'forbidden',
        `A share opens every field of the record, and you may ${limited} only some of them`,
        { resource, action: limited },
      )
    }
  }

  return {
    /** The shares of a record. */
    async list(principal: Principal, name: string, recordId: string): Promise<Share[]> {
      const { collection } = await ownedRecord(principal, name, recordId)
      return (await deps.store.ofRecord(collection.id, recordId)).map(toShare)
    },

    /**
     * Shares a record with a person (by id or email), or changes the level of an existing share. Throws
     * invalid_request, unauthorized, forbidden (not the owner, no update on the record, a column limit),
     * collection_not_found, record_not_found, not_found (an unknown person).
     */
    async share(
      principal: Principal,
      name: string,
      recordId: string,
      input: { userId?: string; userEmail?: string; access: ShareAccess },
    ): Promise<Share> {
      // A share is granted by a person (created_by): never by a key without one or by system work.
      if (principal.kind !== 'anonymous') requirePerson(principal, 'Sharing a record')
      if ((input.userId === undefined) === (input.userEmail === undefined))
        throw new AppError('invalid_request', 'Send exactly one of userId and userEmail')
      // An empty string is no person: refused here rather than taken for the other key (it was a 500).
      if (input.userId === '' || input.userEmail === '')
        throw new AppError('invalid_request', 'userId and userEmail may not be empty')
      const opened = await ownedRecord(principal, name, recordId)
      await assertMayShare(principal, opened, recordId, input.access)
      const collection = opened.collection
      const found =
        input.userId !== undefined
          ? [await deps.users.findRow(input.userId)]
          : await deps.users.findRowsByEmail(input.userEmail!)
      // Only people of the record's project count: an address shared with an account elsewhere must not
      // hide the one person here (and someone of another project is as unknown as nobody).
      const candidates = found.filter((u) => u !== null && u.project_id === collection.projectId)
      const person = candidates.length === 1 ? candidates[0]! : null
      if (!person) throw new AppError('not_found', 'Person not found')
      const row = await deps.store.upsert({
        id: newId(),
        collection_id: collection.id,
        record_id: recordId,
        user_id: person.id,
        access: input.access,
        created_by: principal.userId,
        created_at: deps.clock.seconds(),
      })
      return toShare(row)
    },

    /** Removes a share (new requests of that person lose access at once). Throws as share, and not_found for an unknown share. */
    async unshare(principal: Principal, name: string, recordId: string, shareId: string): Promise<void> {
      const opened = await ownedRecord(principal, name, recordId)
      await assertMayShare(principal, opened, recordId, null)
      const collection = opened.collection
      const row = await deps.store.byId(shareId)
      if (!row || row.collection_id !== collection.id || row.record_id !== recordId)
        throw new AppError('not_found', 'Share not found')
      await deps.store.delete(shareId)
    },
  }
}

export type SharesService = ReturnType<typeof createSharesService>
