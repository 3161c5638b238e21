import type { Principal } from '../../lib/principal.js'
import type { Collection } from '../collections/index.js'

export type ApiRecord = Record<string, unknown>

/** Published after a write committed, with the record before and after (as stored, every field). */
export interface RecordEvents extends Record<string, unknown> {
  'record.create': RecordEvent
  'record.update': RecordEvent
  'record.delete': RecordEvent
}

export interface RecordEvent {
  projectId: string
  collection: string
  before: ApiRecord | null
  after: ApiRecord | null
  /**
   * Who wrote it: the caller, also for the writes its delete caused (cascaded deletes, set-null and hasMany
   * clean-up of referencing records); null for writes the system makes.
   */
  actor: { kind: Principal['kind']; userId: string | null } | null
  at: number
  permanent?: boolean // on record.delete: true when the row was removed for good (permanent=true), false for a soft delete
  /**
   * On record.delete: the acting principal in full, so a consumer can decide with the caller's own
   * permissions (the files module removes a record's files only when this principal could delete them).
   * In process only: realtime and other published copies never carry it.
   */
  principal?: Principal
}

/**
 * A blocking hook inside the write, before it commits (event_filter flows use it): it sees the incoming
 * changes and the record as it is, and may return changed data, or throw an AppError to reject the write.
 */
export interface BeforeWrite {
  action: 'create' | 'update' | 'delete'
  collection: Collection
  principal: Principal
  before: ApiRecord | null
  data: ApiRecord
}

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
    /** Runs every hook in turn; each sees the data the previous one returned. */
    async run(write: BeforeWrite): Promise<ApiRecord> {
      let data = write.data
      for (const hook of hooks) {
        const changed = await hook({ ...write, data })
        if (changed) data = changed
      }
      return data
    },
  }
}

export type WriteHooks = ReturnType<typeof createWriteHooks>
