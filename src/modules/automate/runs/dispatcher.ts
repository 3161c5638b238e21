import { busyTicker, type BusyTicker, type Clock } from '../../../lib/clock.js'
import type { Logger } from '../../../lib/log.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { SlotClaim, Slots } from '../../../lib/slots/index.js'
import type { FlowOptions } from '../model.js'
import { RunAborted } from './executor.js'

/**
 * Concurrency and cancels of runs across instances. A run holds a place under its project's key (the
 * max-concurrent-runs quota) and, unless the flow is `parallel`, under its flow's key (sequential = 1,
 * N = N), taken all or none through `Slots` (leases renewed while held, so a dead instance frees its
 * places). A run that finds no place is parked and tried again when a place frees here, when another
 * instance says one freed, and every `retryMs` otherwise. Cancels are published, so whichever instance
 * runs the run aborts it.
 *
 * Places belong to the run (the holder is its id), not to an instance: a run started as running here may
 * execute on another instance (the queue hands its job to any of them), which then `adopt`s its places,
 * renews and frees them. This instance stops renewing them once it hears they were freed, or once a
 * renewal finds them gone, and tells `onFreedElsewhere` so the runner forgets the run.
 */
export interface DispatcherDeps {
  readonly slots: Slots
  readonly pubsub: PubSub
  readonly clock: Clock
  readonly log: Logger
  /** How long a place is held without renewal (a dead instance's places free after this). */
  readonly leaseMs?: number
  /** How often parked runs try again without being woken. */
  readonly retryMs?: number
}

const cancelChannel = 'automate:runs:cancel'
const freedChannel = 'automate:runs:slot-freed'

export type Dispatcher = Awaited<ReturnType<typeof createDispatcher>>

/** The slot keys of a run: its project's and, unless parallel, its flow's. */
export function claimsFor(
  projectId: string,
  flowId: string,
  concurrency: FlowOptions['concurrency'],
  maxConcurrentRuns: number,
): SlotClaim[] {
  const claims: SlotClaim[] = [{ key: `automate:project:${projectId}`, limit: maxConcurrentRuns }]
  if (concurrency !== 'parallel')
    claims.push({ key: `automate:flow:${flowId}`, limit: concurrency === 'sequential' ? 1 : concurrency })
  return claims
}

/** Every key a run of this flow can hold (to release them without knowing its options). */
export function keysFor(projectId: string, flowId: string): string[] {
  return [`automate:project:${projectId}`, `automate:flow:${flowId}`]
}

export async function createDispatcher(deps: DispatcherDeps) {
  const { slots, pubsub, clock, log } = deps
  const leaseMs = deps.leaseMs ?? 30_000
  const retryMs = deps.retryMs ?? 250
  /** Runs holding places in this instance: runId → keys (renewed together). */
  const held = new Map<string, string[]>()
  /**
   * Runs waiting for a place, grouped by the keys they claim (a flow of a project), each group in arrival
   * order: only a group's first run is tried, so a wake-up costs one try per group, not one per waiting run.
   */
  const parked = new Map<string, Map<string, { claims: SlotClaim[]; resume: () => void }>>()
  const groupOf = new Map<string, string>()
  function unpark(runId: string): void {
    const group = groupOf.get(runId)
    if (group === undefined) return
    groupOf.delete(runId)
    const runs = parked.get(group)
    if (runs?.delete(runId) && runs.size === 0) parked.delete(group)
  }
  /** Runs executing here: runId → their cancel. */
  const running = new Map<string, AbortController>()
  let retrying = false
  let closed = false

  const freedListeners = new Set<(runId: string) => void>()
  /** Places of a run that does not execute here were freed by the instance that ran it: stop holding them. */
  function freedElsewhere(runId: string): void {
    if (running.has(runId) || !held.delete(runId)) return
    for (const listener of freedListeners) listener(runId)
  }

  const renewer: BusyTicker = busyTicker(
    clock,
    Math.max(1, Math.floor(leaseMs / 3)),
    async () => {
      const now = clock.now()
      for (const [runId, keys] of held) {
        if (await slots.renew(runId, keys, leaseMs, now)) continue
        // Gone while another instance ran it (its "freed" message was lost): not a lost lease.
        if (!running.has(runId)) freedElsewhere(runId)
        else log.warn({ runId }, 'a run lost its concurrency place (lease expired)')
      }
    },
    () => held.size > 0,
    { onError: (err) => log.warn({ err }, 'renewing run concurrency places failed') },
  )
  const retrier: BusyTicker = busyTicker(
    clock,
    retryMs,
    () => tryParked(),
    () => parked.size > 0,
    { onError: (err) => log.warn({ err }, 'retrying parked runs failed') },
  )
  function hold(runId: string, keys: string[]): void {
    held.set(runId, keys)
    renewer.wake()
  }

  const unsubscribeCancel = await pubsub.subscribe(cancelChannel, (runId) => {
    running.get(runId)?.abort(new RunAborted('cancelled', 'The run was cancelled'))
    unpark(runId)
  })
  const unsubscribeFreed = slots.shared
    ? await pubsub.subscribe(freedChannel, (runId) => {
        freedElsewhere(runId)
        void tryParked()
      })
    : null

  let again = false
  async function tryParked(): Promise<void> {
    if (parked.size === 0 || closed) return
    // One pass at a time; a wake-up during a pass makes it go round once more.
    if (retrying) {
      again = true
      return
    }
    retrying = true
    try {
      do {
        again = false
        for (const runs of [...parked.values()]) {
          for (const [runId, wait] of runs) {
            if (!(await acquire(runId, wait.claims))) break
            unpark(runId)
            wait.resume()
          }
        }
      } while (again && !closed)
    } finally {
      retrying = false
    }
  }

  async function acquire(runId: string, claims: SlotClaim[]): Promise<boolean> {
    const ok = await slots.acquire(runId, claims, leaseMs, clock.now())
    if (ok)
      hold(
        runId,
        claims.map((c) => c.key),
      )
    return ok
  }

  return {
    /** Takes the run's places now; true when taken. */
    acquire,

    /**
     * Holds (renews and, when it ends, frees) the places of a run another instance took for it and whose
     * job this instance executes.
     */
    adopt(runId: string, claims: readonly SlotClaim[]): void {
      hold(
        runId,
        claims.map((c) => c.key),
      )
    },

    /** Told of each run this instance held places for that another instance executed and freed. */
    onFreedElsewhere(listener: (runId: string) => void): void {
      freedListeners.add(listener)
    },

    /** Parks a run that found no place; `resume` is called once it holds its places (it then owns them). */
    park(runId: string, claims: SlotClaim[], resume: () => void): void {
      const group = claims.map((c) => c.key).join('|')
      let runs = parked.get(group)
      if (!runs) parked.set(group, (runs = new Map()))
      runs.set(runId, { claims, resume })
      groupOf.set(runId, group)
      retrier.wake()
    },

    /** Frees the run's places (a finished, cancelled or reaped run), here and for every waiter. */
    async release(runId: string, keys: readonly string[] = held.get(runId) ?? []): Promise<void> {
      held.delete(runId)
      unpark(runId)
      if (keys.length === 0) return
      await slots.release(runId, keys)
      if (slots.shared) await pubsub.publish(freedChannel, runId)
      void tryParked()
    },

    /** Registers a run executing here; its signal aborts on a cancel from any instance. */
    track(runId: string): AbortSignal {
      const controller = new AbortController()
      running.set(runId, controller)
      return controller.signal
    },
    untrack(runId: string): void {
      running.delete(runId)
    },

    /** Stops the run wherever it executes or waits (every instance hears it, this one included). */
    async cancel(runId: string): Promise<void> {
      running.get(runId)?.abort(new RunAborted('cancelled', 'The run was cancelled'))
      unpark(runId)
      await pubsub.publish(cancelChannel, runId)
    },

    /** Places held under a key now (usage of the concurrent-runs quota). */
    count: (key: string) => slots.count(key, clock.now()),

    async close(): Promise<void> {
      closed = true
      await renewer.stop()
      await retrier.stop()
      await unsubscribeCancel()
      await unsubscribeFreed?.()
      for (const controller of running.values())
        controller.abort(new RunAborted('cancelled', 'The server is shutting down'))
      parked.clear()
      groupOf.clear()
      freedListeners.clear()
    },
  }
}
