import { busyTicker, type BusyTicker, type Clock } from '../../../lib/clock.js'
import type { Logger } from '../../../lib/log.js'
import type { StepProgress, StepRecord } from './execution.js'
import type { RunWriter } from './run-writer.js'
import type { RunFinish, StepLogRow } from './run-rows.js'
import { stepLogRow } from './step-logs.js'

/** How often the logs of steps that ended are written while their run goes on. */
const flushEveryMs = 1000

/**
 * What a run's steps leave as they go (decision 054). A step that writes has its log written durably
 * before it begins, with every log held before it, so a lost instance's run is never repeated past a
 * write; within one top-level step only the first write waits (once one is durable, losing the run there
 * ends it interrupted anyway). Logs of steps that ended are held and written with the next such write,
 * every second (so a long run's progress can be read), or with the run's end, in its batch: a short run
 * writes its logs once, as before, and `log_level` drops what it would not keep before it is written.
 */
export function createStepProgress(deps: { writer: RunWriter; clock: Clock; log: Logger }) {
  const { writer, log } = deps
  const held = new Map<string, StepLogRow[]>()
  const failed = (err: unknown) => log.warn({ err }, 'writing a step log failed')

  function write(rows: readonly StepLogRow[]): Promise<unknown> {
    return Promise.all(rows.map((row) => writer.step(row)))
  }

  function take(runId: string): StepLogRow[] {
    const rows = held.get(runId) ?? []
    if (rows.length > 0) held.set(runId, [])
    return rows
  }

  // Ticks only while runs are under way here.
  const ticker: BusyTicker = busyTicker(
    deps.clock,
    flushEveryMs,
    () => {
      for (const runId of held.keys()) void write(take(runId)).catch(failed)
    },
    () => held.size > 0,
    { onError: failed },
  )

  return {
    /** The progress a run reports to the executor. */
    of(runId: string, projectId: string): StepProgress {
      held.set(runId, [])
      ticker.wake()
      let durableTop = -1
      const hold = (record: StepRecord) => held.get(runId)?.push(stepLogRow(runId, projectId, record))
      return {
        async began(record) {
          if (record.top === durableTop) return void hold(record)
          await write([...take(runId), stepLogRow(runId, projectId, record)])
          durableTop = record.top
        },
        ended: hold,
      }
    },

    /** Queues the run's held logs (what `keep` keeps of them) just before its end, so they share its batch. */
    beforeFinish(runId: string, keep: RunFinish['keep']): void {
      const rows = take(runId).filter((row) => keep === 'all' || (keep === 'errors_only' && row.status === 'failed'))
      held.delete(runId)
      void write(rows).catch(failed)
    },

    /** Forgets a run's held logs (it ended without a finish of its own). */
    forget(runId: string): void {
      held.delete(runId)
    },

    close: () => ticker.stop(),
  }
}
