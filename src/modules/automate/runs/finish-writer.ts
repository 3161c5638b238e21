import type { Logger } from '../../../lib/log.js'
import type { FlowLookup } from '../model.js'
import type { RunFinish, RunsStore } from './runs-store.js'

interface Waiting {
  readonly finish: RunFinish
  resolve(written: boolean): void
  reject(err: unknown): void
}

// Runs per transaction at most; more wait for the next one.
const maxBatch = 256

/**
 * Group commit for the end of runs: every run that finishes while the previous write is under way (or
 * in the same event-loop turn) is written in the next transaction, its final status and step logs
 * together (runs-store `finish`). One transaction at a time, so under load each one carries many runs.
 * If a batch fails, its runs are written one by one, so one bad run cannot lose the others.
 */
export function createFinishWriter(store: RunsStore, log: Logger, counters: Pick<FlowLookup, 'countRun' | 'countRuns'>) {
  let queue: Waiting[] = []
  let writing: Promise<void> | null = null

  async function writeBatch(batch: Waiting[]): Promise<void> {
    try {
      const ends = await store.finish(batch.map((w) => w.finish))
      const written = new Set(ends.map((f) => f.runId))
      for (const w of batch) w.resolve(written.has(w.finish.runId))
      await count(ends)
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err)
      log.warn({ err, runs: batch.length }, 'writing a batch of finished runs failed; writing them one by one')
      for (const w of batch) await writeBatch([w])
    }
  }

  /** The flows' counters, one write per flow of the batch (not per run). A failure is logged: the runs themselves are written. */
  async function count(ends: readonly RunFinish[]): Promise<void> {
    const byFlow = new Map<string, { projectId: string; flowId: string; runs: number; failures: number; atSeconds: number }>()
    for (const f of ends) {
      const key = `${f.projectId}/${f.flowId}`
      const entry = byFlow.get(key) ?? { projectId: f.projectId, flowId: f.flowId, runs: 0, failures: 0, atSeconds: 0 }
      entry.runs++
      if (f.status !== 'completed') entry.failures++
      entry.atSeconds = Math.max(entry.atSeconds, Math.floor(f.finishedAt / 1000))
      byFlow.set(key, entry)
    }
    for (const c of byFlow.values()) {
      try {
        if (counters.countRuns) await counters.countRuns(c.projectId, c.flowId, c)
        else for (let i = 0; i < c.runs; i++) await counters.countRun(c.projectId, c.flowId, { failed: i < c.failures, atSeconds: c.atSeconds })
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
      pump()
    })
  }

  return {
    /** Writes a run's end; true when written, false when a cancel or reap had already ended it. */
    write(finish: RunFinish): Promise<boolean> {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ finish, resolve, reject })
        if (queue.length === 1 && !writing) setImmediate(pump)
      })
    },
    /** Resolves once everything queued so far is written. */
    async drain(): Promise<void> {
      while (writing || queue.length > 0) {
        pump()
        await writing
      }
    },
  }
}
