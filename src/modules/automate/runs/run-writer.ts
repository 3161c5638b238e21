import type { Logger } from '../../../lib/log.js'
import type { FlowLookup } from '../model.js'
import type { RunFinish, RunRow, StepLogRow } from './run-rows.js'
import type { RunsStore } from './runs-store.js'

type Write =
  | { readonly kind: 'insert'; readonly row: RunRow }
  | { readonly kind: 'step'; readonly row: StepLogRow }
  | { readonly kind: 'finish'; readonly finish: RunFinish }

interface Waiting {
  readonly write: Write
  resolve(written: boolean): void
  reject(err: unknown): void
}

// Writes per transaction at most; more wait for the next one.
const maxBatch = 512
// While writes keep coming (the last batch ended this recently), the next batch waits this long for more:
// at a steady 2,000 calls/s each call arrives in its own event-loop turn, and a transaction per run would
// cost more than the run. Idle, a write goes at the next turn as before.
const steadyWithinMs = 5
const lingerMs = 1
// The flows' counters (statistics, decision 029) are written at most this often while batches follow
// each other, and at once when the writer falls idle.
const countEveryMs = 200

export type RunWriter = ReturnType<typeof createRunWriter>

/**
 * Group commit for what runs write as they go: each new run's row (accepted: the caller hears 202 once it
 * is committed), each step's log when the step ends (or, for a step with
 * effects, when it begins) and each run's end. Everything queued while the previous transaction is under
 * way (or in the same event-loop turn) goes into the next one, in order, so under load each carries many
 * runs. A step's log is durable once its promise resolves: a crash after it loses nothing of that step.
 * If a batch fails, its writes are retried one by one, so one bad write cannot lose the others.
 */
export function createRunWriter(store: RunsStore, log: Logger, counters: Pick<FlowLookup, 'countRun' | 'countRuns'>) {
  let queue: Waiting[] = []
  let writing: Promise<void> | null = null
  let lastBatchAt = 0
  let countedAt = 0
  const tally = new Map<
    string,
    { projectId: string; flowId: string; runs: number; failures: number; atSeconds: number }
  >()

  async function writeBatch(batch: Waiting[]): Promise<void> {
    try {
      const inserts: RunRow[] = []
      const steps: StepLogRow[] = []
      const finishes: RunFinish[] = []
      for (const w of batch) {
        if (w.write.kind === 'insert') inserts.push(w.write.row)
        else if (w.write.kind === 'step') steps.push(w.write.row)
        else finishes.push(w.write.finish)
      }
      const ends = await store.write({ inserts, steps, finishes })
      const written = new Set(ends.map((f) => f.runId))
      for (const w of batch) w.resolve(w.write.kind !== 'finish' || written.has(w.write.finish.runId))
      await count(ends)
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err)
      log.warn({ err, writes: batch.length }, 'writing a batch of run progress failed; writing it one by one')
      for (const w of batch) await writeBatch([w])
    }
  }

  /** Adds the batch's ends to the flows' counters; writes them when the writer is idle or every countEveryMs. */
  async function count(ends: readonly RunFinish[]): Promise<void> {
    for (const f of ends) {
      const key = `${f.projectId}/${f.flowId}`
      const entry = tally.get(key) ?? { projectId: f.projectId, flowId: f.flowId, runs: 0, failures: 0, atSeconds: 0 }
      entry.runs++
      if (f.status !== 'completed') entry.failures++
      entry.atSeconds = Math.max(entry.atSeconds, Math.floor(f.finishedAt / 1000))
      tally.set(key, entry)
    }
    if (queue.length === 0 || Date.now() - countedAt >= countEveryMs) await writeCounts()
  }

  /** The flows' counters, one write per flow (not per run). A failure is logged: the runs themselves are written. */
  async function writeCounts(): Promise<void> {
    countedAt = Date.now()
    const counts = [...tally.values()]
    tally.clear()
    for (const c of counts) {
      try {
        if (counters.countRuns) await counters.countRuns(c.projectId, c.flowId, c)
        else
          for (let i = 0; i < c.runs; i++)
            await counters.countRun(c.projectId, c.flowId, { failed: i < c.failures, atSeconds: c.atSeconds })
      } catch (err) {
        log.warn({ err, flowId: c.flowId }, 'counting finished runs on their flow failed')
      }
    }
  }

  function pump(): void {
    if (writing || queue.length === 0) return
    const batch = queue.slice(0, maxBatch)
    queue = queue.slice(batch.length)
    writing = writeBatch(batch).finally(() => {
      writing = null
      lastBatchAt = Date.now()
      pump()
    })
  }

  function enqueue(write: Write): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      queue.push({ write, resolve, reject })
      if (queue.length > 1 || writing) return
      if (Date.now() - lastBatchAt < steadyWithinMs) setTimeout(pump, lingerMs)
      else setImmediate(pump)
    })
  }

  return {
    /** Writes a new run's row; resolves once it is committed (durable), rejects with the insert's error. */
    insert: async (row: RunRow): Promise<void> => void (await enqueue({ kind: 'insert', row })),
    /** Writes a step's log (a new row, or the end of one written when it began). */
    step: (row: StepLogRow): Promise<boolean> => enqueue({ kind: 'step', row }),
    /** Writes a run's end; true when written, false when a cancel or a recovery had already ended it. */
    finish: (finish: RunFinish): Promise<boolean> => enqueue({ kind: 'finish', finish }),
    /** Resolves once everything queued so far is written. */
    async drain(): Promise<void> {
      while (writing || queue.length > 0) {
        pump()
        await writing
      }
      if (tally.size > 0) await writeCounts()
    },
  }
}
