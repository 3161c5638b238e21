import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import { withinCapabilities } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { UsersService } from '../users/index.js'
import type { Opened, Opener } from './context.js'
import type { ApiRecord, RecordEvents, WriteHooks } from './events.js'
import type { Freshness } from './freshness.js'
import { createWritePipeline } from './pipeline.js'
import { fullRecord } from './present.js'
import type { SharesStore } from './shares-store.js'
import type { Row } from './store.js'

export interface TransferInput {
  userId?: string
  userEmail?: string
  /** Leave the previous owner an `edit` share (default true; only where sharing is on). */
  keepAccess?: boolean
}

export interface TransferResult {
  success: true
  changed: boolean
  owner: string
  previousOwner: string | null
  previousOwnerKeptAccess: boolean
}

export interface TransferDeps {
  open: Opener
  users: Pick<UsersService, 'findRow' | 'findRowsByEmail'>
  shares: SharesStore
  collections: Pick<CollectionsService, 'markOwnerScoped'>
  events: EventBus<RecordEvents>
  /** The records module's blocking hooks (records.hooks): a transfer is an update of owned_by. */
  hooks: WriteHooks
  freshness: Freshness
  audit: AuditService
  clock: Clock
}

// Another write landing between the read and the write is retried from the start (the caller's right
// to transfer may depend on who owns the record now), without running the hooks again; a record that
// keeps changing is a 409.
const maxAttempts = 5

/** The record's effective owner: owned_by, else created_by (addendum §4). */
function ownerOf(row: Row): string | null {
  return ((row.owned_by ?? row.created_by) as string | null) ?? null
}

/**
 * An API key acts on its person's ownership only when it may change that person's records there: its
 * capabilities cover update (or transfer) on the collection. A read-only key never hands a record away.
 * (Not transfer alone: a key can hold no more than its creator, and an owner needs no transfer grant.)
 */
function keyMayTransfer(principal: Principal, name: string): boolean {
  const resource = `collections/${name}`
  return ['update', 'transfer'].some((action) => withinCapabilities(principal, { resource, action }))
}

/**
 * POST /records/:id/transfer: hands a record to another person of the project by setting owned_by
 * (created_by never changes). Allowed for the record's effective owner, or a caller whose grants give
 * `transfer` on the collection over that record (`manage` includes it, `update` does not).
 */
export function createTransfer(deps: TransferDeps) {
  const pipeline = createWritePipeline(deps)

  /** The record as the hooks and events see it: owned_by is part of it, whether or not the collection shows it. */
  const withOwner = (opened: Opened, row: Row): ApiRecord => ({
    ...fullRecord(opened.shape, row),
    owned_by: row.owned_by ?? null,
  })

  /** Throws unauthorized or forbidden unless the caller may transfer this (readable) record. */
  async function assertMayTransfer(principal: Principal, opened: Opened, row: Row): Promise<void> {
    const owner = ownerOf(row)
    // The owner transfers their own record; a capped caller (a flow run) only when its ceiling is the owner too.
    if (owner !== null && ownedByEveryLayer(principal, owner) && keyMayTransfer(principal, opened.collection.name))
      return
    // Throws 401 for anonymous callers, 403 naming collections/<name>:transfer for others.
    const asTransfer = await deps.open(principal, opened.collection.name, 'transfer')
    if (asTransfer.scope.rows === null) return
    if (await asTransfer.store.byId(String(row.id), asTransfer.scope.rows, false)) return
    throw new AppError(
      'forbidden',
      "Only the record's owner or a role granted transfer on this record may transfer it",
      {
        resource: `collections/${opened.collection.name}`,
        action: 'transfer',
      },
    )
  }

  /** The person of the record's project, by id or email; anyone else is the same 404. */
  async function personOf(projectId: string, input: TransferInput): Promise<string> {
    const found =
      input.userId !== undefined
        ? [await deps.users.findRow(input.userId)]
        : await deps.users.findRowsByEmail(input.userEmail!)
    const candidates = found.filter((u) => u !== null && u.project_id === projectId)
    if (candidates.length !== 1) throw new AppError('not_found', 'Person not found')
    return candidates[0]!.id
  }

  /** Leaves the previous owner an edit share; false when there is nobody (of this project) to leave it to. */
  async function leaveAccess(
    principal: Principal,
    opened: Opened,
    recordId: string,
    previous: string,
  ): Promise<boolean> {
    const person = await deps.users.findRow(previous)
    if (!person || person.project_id !== opened.collection.projectId) return false
    await deps.shares.upsert({
      id: newId(),
      collection_id: opened.collection.id,
      record_id: recordId,
      user_id: previous,
      access: 'edit',
      created_by: principal.userId,
      created_at: deps.clock.seconds(),
    })
    return true
  }

  /** A share of the new owner is pointless: owning covers everything it gave. */
  async function dropShareOf(opened: Opened, recordId: string, userId: string): Promise<void> {
    for (const share of await deps.shares.ofRecord(opened.collection.id, recordId)) {
      if (share.user_id === userId) await deps.shares.delete(share.id)
    }
  }

  function unchanged(owner: string): TransferResult {
    return { success: true, changed: false, owner, previousOwner: owner, previousOwnerKeptAccess: false }
  }

  return {
    /**
     * Transfers a record to a person (by userId, or userEmail matched case-insensitively). A record that
     * already belongs to that person is `changed: false`, not an error. Throws invalid_request (neither
     * or both of userId and userEmail), unauthorized, forbidden, collection_not_found, record_not_found,
     * not_found (no such person in the project), conflict (the record keeps changing).
     */
    async transfer(principal: Principal, name: string, id: string, input: TransferInput): Promise<TransferResult> {
      if ((input.userId === undefined) === (input.userEmail === undefined))
        throw new AppError('invalid_request', 'Send exactly one of userId and userEmail')
      if (input.userId === '' || input.userEmail === '')
        throw new AppError('invalid_request', 'userId and userEmail may not be empty')
      const keepAccess = input.keepAccess ?? true
      // The hooks run once, on the record as first read (a hook may refuse the transfer; the values it
      // returns are not used: a transfer writes owned_by only). A retry after a lost race re-checks the
      // caller's right on the record as it is then, but does not run them again (decision 021).
      let hooked = false
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        const opened = await deps.open(principal, name, 'read')
        const row = await opened.store.byId(id, opened.scope.rows, false)
        if (!row) throw new AppError('record_not_found', 'Record not found')
        const previous = ownerOf(row)
        const refusal = await assertMayTransfer(principal, opened, row).then(
          () => null,
          (err: unknown) => err,
        )
        if (refusal !== null) {
          if (principal.userId === null) throw refusal
          // A retry by whoever handed the record over (and kept access) is not an error; anyone else is
          // refused before a person is looked up, so the answer tells them nothing about accounts.
          const target = await personOf(opened.collection.projectId, input).catch(() => null)
          if (target !== null && target === previous) return unchanged(target)
          throw refusal
        }
        const target = await personOf(opened.collection.projectId, input)
        if (previous === target) return unchanged(target)
        const before = withOwner(opened, row)
        if (!hooked)
          await pipeline.hook(principal, {
            action: 'update',
            collection: opened.collection,
            before,
            data: { owned_by: target },
          })
        hooked = true

        const now = deps.clock.seconds()
        const updated = await opened.store.update(
          id,
          { owned_by: target, updated_at: now, updated_by: principal.userId },
          null,
          Number(row._version),
        )
        if (!updated) continue
        await deps.collections.markOwnerScoped(opened.collection)
        await dropShareOf(opened, id, target)
        const kept =
          keepAccess &&
          previous !== null &&
          opened.collection.accessControl?.sharing === true &&
          (await leaveAccess(principal, opened, id, previous))
        await pipeline.publish(principal, [
          { type: 'record.update', collection: opened.collection, before, after: withOwner(opened, updated) },
        ])
        await deps.audit.record({
          projectId: opened.collection.projectId,
          action: 'record.transferred',
          actor: principal,
          target: { type: 'record', id },
          details: { collection: name, from: previous, to: target, keepAccess, previousOwnerKeptAccess: kept },
        })
        return { success: true, changed: true, owner: target, previousOwner: previous, previousOwnerKeptAccess: kept }
      }
      throw new AppError('conflict', 'The record keeps changing; retry')
    },
  }
}

export type Transfer = ReturnType<typeof createTransfer>

/** True when the principal and each of its ceilings act for this person. */
function ownedByEveryLayer(principal: Principal, owner: string): boolean {
  for (let layer: Principal | null = principal; layer !== null; layer = layer.ceiling)
    if (layer.userId !== owner) return false
  return true
}
