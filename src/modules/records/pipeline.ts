import type { Clock } from '../../lib/clock.js'
import { principalSnapshot, type EventBus } from '../../lib/events/index.js'
import type { Principal } from '../../lib/principal.js'
import type { Collection } from '../collections/index.js'
import {
  withActingPrincipal,
  type ApiRecord,
  type BeforeWrite,
  type FieldChange,
  type RecordEvent,
  type RecordEvents,
  type WriteHooks,
} from './events.js'
import type { Freshness } from './freshness.js'

/**
 * The one records write pipeline (decision 021). Every write (create, update, delete, restore, bulk delete,
 * NDJSON import, transfer, relation cascades, structure repairs through update) goes:
 *
 *   1. validate: the caller's access, the body's fields, the version, restrict relations, the cascade plan;
 *   2. blocking hooks, exactly once per logical write (one record written: a row of a bulk delete, a line of
 *      an import, each record a cascade deletes or clears), outside any retry, all of a request's before
 *      any of its writes, so a refusal leaves nothing written;
 *   3. the write, version-checked (`UPDATE … WHERE _version = ?`); a lost race is retried without hooks;
 *   4. after commit, the write version of every collection written is moved (decision 025: cached totals and
 *      ETags go stale on every instance before the write is answered), then the events, carrying the
 *      principal snapshot and, for updates, the changed fields.
 *
 * `run` is the four steps for the writes that are one call; the import, which refuses lines one by one,
 * uses `hook` and `publish` in the same order.
 */

/** One logical write as the hooks see it (the acting principal is added by the pipeline). */
export type WriteIntent = Omit<BeforeWrite, 'principal'>

/** A write that committed, as its event tells it. */
export type Committed =
  | { type: 'record.create'; collection: Collection; after: ApiRecord }
  | { type: 'record.update'; collection: Collection; before: ApiRecord; after: ApiRecord }
  | { type: 'record.delete'; collection: Collection; before: ApiRecord; permanent: boolean }

export interface PipelineDeps {
  hooks: WriteHooks
  events: EventBus<RecordEvents>
  freshness: Pick<Freshness, 'bump'>
  clock: Clock
}

// Moved by every update, so naming them in `changes` would tell nothing.
const movedByEveryWrite = new Set(['updated_at', 'updated_by', '_version'])

/** Deep equality of API values (JSON: objects compared by keys, whatever their order). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = Object.keys(left)
  return (
    keys.length === Object.keys(right).length &&
    keys.every((k) => Object.hasOwn(right, k) && sameValue(left[k], right[k]))
  )
}

/** The fields an update changed, with their values before and after. */
export function changesBetween(before: ApiRecord, after: ApiRecord): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {}
  const note = (key: string) => {
    if (movedByEveryWrite.has(key)) return
    const was = before[key] ?? null
    const now = after[key] ?? null
    if (!sameValue(was, now)) changes[key] = { before: was, after: now }
  }
  for (const key in after) note(key)
  for (const key in before) if (!(key in after)) note(key)
  return changes
}

export function createWritePipeline(deps: PipelineDeps) {
  /** Step 2 for one logical write: the hooks' data (possibly changed), or what a hook threw. */
  function hook(principal: Principal, intent: WriteIntent): Promise<ApiRecord> {
    return deps.hooks.run({
      action: intent.action,
      collection: intent.collection,
      principal,
      before: intent.before,
      data: intent.data,
    })
  }

  /** Step 2 for every write of a request, in order, before any of them is written; the first refusal throws. */
  async function hookAll(principal: Principal, intents: readonly WriteIntent[]): Promise<ApiRecord[]> {
    const out: ApiRecord[] = []
    for (const intent of intents) out.push(await hook(principal, intent))
    return out
  }

  /**
   * Step 4: the write versions of the collections written, then one event per committed write, in order,
   * each with the principal snapshot (and the full principal in process). Await it before answering.
   */
  async function publish(principal: Principal, committed: readonly Committed[]): Promise<void> {
    if (committed.length === 0) return
    await deps.freshness.bump(committed.map((write) => write.collection))
    const snapshot = Object.freeze(principalSnapshot(principal))
    const at = deps.clock.seconds()
    for (const write of committed) {
      const { projectId, name: collection } = write.collection
      // Literals with every key written out: this runs once per record written.
      let event: RecordEvent
      if (write.type === 'record.create')
        event = { projectId, collection, before: null, after: write.after, principal: snapshot, at }
      else if (write.type === 'record.update')
        event = {
          projectId,
          collection,
          before: write.before,
          after: write.after,
          changes: changesBetween(write.before, write.after),
          principal: snapshot,
          at,
        }
      else
        event = {
          projectId,
          collection,
          before: write.before,
          after: null,
          principal: snapshot,
          at,
          permanent: write.permanent,
        }
      deps.events.emit(write.type, withActingPrincipal(event, principal))
    }
  }

  return {
    hook,
    hookAll,
    publish,

    /**
     * Steps 2 to 4 around a validated request: the hooks of every intent, then `write` with their data
     * (in intent order), which answers what committed; then its events. Nothing is published when the
     * write throws, but the versions of the intents' collections move: part of it may have committed.
     */
    async run<T>(
      principal: Principal,
      intents: readonly WriteIntent[],
      write: (data: ApiRecord[]) => Promise<{ committed: Committed[]; result: T }>,
    ): Promise<T> {
      const data = intents.length === 1 ? [await hook(principal, intents[0]!)] : await hookAll(principal, intents)
      let done: { committed: Committed[]; result: T }
      try {
        done = await write(data)
      } catch (err) {
        await deps.freshness.bump(intents.map((intent) => intent.collection))
        throw err
      }
      await publish(principal, done.committed)
      return done.result
    },
  }
}

export type WritePipeline = ReturnType<typeof createWritePipeline>
