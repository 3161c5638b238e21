import type { PrincipalSnapshot } from '../../lib/events/index.js'
import type { Principal } from '../../lib/principal.js'
import type { Collection } from '../collections/index.js'

export type ApiRecord = Record<string, unknown>

/** Published after a write committed (docs/events.md documents every key; flows receive exactly these). */
export interface RecordEvents extends Record<string, unknown> {
  'record.create': RecordEvent
  'record.update': RecordEvent
  'record.delete': RecordEvent
}

/** One changed field of an update: its value before and after (API values, every locale). */
export interface FieldChange {
  before: unknown
  after: unknown
}

export interface RecordEvent {
  projectId: string
  collection: string
  /** The record as stored before the write (every field); null on record.create. */
  before: ApiRecord | null
  /** The record as stored after the write (every field); null on record.delete. */
  after: ApiRecord | null
  /**
   * On record.update: the fields whose value the write changed, with their previous and new values. System
   * columns that every write moves (updated_at, updated_by, _version) are left out; deleted_at (a restore)
   * and owned_by (a transfer) are in when they changed.
   */
  changes?: Record<string, FieldChange>
  /**
   * Who wrote it: the caller, also for the writes its delete caused (cascaded deletes, set-null and hasMany
   * clean-up of referencing records).
   */
  principal: PrincipalSnapshot
  at: number
  /** On record.delete: true when the row was removed for good (permanent=true), false for a soft delete. */
  permanent?: boolean
}

/**
 * The acting principal in full rides along in process, under a symbol and not enumerable: no spread, JSON
 * copy, published message or flow trigger ever carries it. The files module uses it to remove a record's
 * files only when this principal could delete them.
 */
const acting: unique symbol = Symbol('plinth.actingPrincipal')

/** The event with the full principal attached for in-process consumers (see actingPrincipalOf). */
export function withActingPrincipal<E extends object>(event: E, principal: Principal): E {
  Object.defineProperty(event, acting, { value: principal, enumerable: false })
  return event
}

/** The full principal of the write behind an in-process event, or undefined (an event rebuilt from JSON). */
export function actingPrincipalOf(event: object): Principal | undefined {
  return (event as { [acting]?: Principal })[acting]
}

/**
 * What a blocking hook is told about one logical write, before anything of it is written (event_filter
 * flows use it). `restore` brings a soft-deleted record back; `delete` is soft or permanent, and a cascaded
 * delete or reference clean-up (set-null, hasMany) is a write of its own, on the referencing collection.
 */
export interface BeforeWrite {
  action: 'create' | 'update' | 'delete' | 'restore'
  collection: Collection
  /** The acting principal: the caller, also for the cascades its delete causes. */
  principal: Principal
  /** The record as stored when the hook runs; null for a create. */
  before: ApiRecord | null
  /** The incoming values (API values): the body's fields, JSON operators already applied; {} for delete and restore. */
  data: ApiRecord
}

/**
 * A blocking hook: returns changed data (create, update, reference clean-up), or throws an AppError to
 * refuse the write, which reaches the caller in the envelope and leaves nothing written.
 */
export type BeforeWriteHook = (write: BeforeWrite) => Promise<ApiRecord | void> | ApiRecord | void

/** The registry of blocking hooks, in registration order. */
export function createWriteHooks() {
  const hooks: BeforeWriteHook[] = []
  return {
    /** Adds a hook; returns its removal. */
    add(hook: BeforeWriteHook): () => void {
      hooks.push(hook)
      return () => {
        const i = hooks.indexOf(hook)
        if (i >= 0) hooks.splice(i, 1)
      }
    },
    /** Runs every hook in turn; each sees the data the previous one returned. Only the write pipeline calls it. */
    async run(write: BeforeWrite): Promise<ApiRecord> {
      let data = write.data
      for (const hook of hooks) {
        // A literal, not a spread: this runs for every record written.
        const changed = await hook({
          action: write.action,
          collection: write.collection,
          principal: write.principal,
          before: write.before,
          data,
        })
        if (changed) data = changed
      }
      return data
    },
  }
}

export type WriteHooks = ReturnType<typeof createWriteHooks>
