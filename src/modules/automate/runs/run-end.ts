import type { Logger } from '../../../lib/log.js'
import type { RunStatus } from '../model.js'
import type { ExecutionResult } from './executor.js'
import type { RunWriter } from './run-writer.js'
import type { createStepProgress } from './step-progress.js'
import type { LocalRun } from './takeover.js'

/**
 * A run's end once its execution returned: its step log kept as its log_level says, its row ended, a line
 * in the server log when it did not complete (the run's own log is in its steps); ends counted by status.
 */
export function createRunEnd(deps: {
  writer: RunWriter
  progress: ReturnType<typeof createStepProgress>
  log: Logger
}) {
  const { writer, progress, log } = deps
  const ended = new Map<RunStatus, number>()
  return {
    async write(run: LocalRun, result: ExecutionResult): Promise<void> {
      const level = run.definition.options.log_level
      const keep = level === 'none' ? 'none' : level === 'errors_only' ? 'errors_only' : 'all'
      progress.beforeFinish(run.id, keep)
      const written = await writer.finish({
        projectId: run.flow.projectId,
        flowId: run.flow.id,
        runId: run.id,
        status: result.status,
        error: result.error ? JSON.stringify(result.error) : null,
        finishedAt: result.finishedAt,
        durationMs: Math.max(0, result.finishedAt - run.startedAt),
        keep,
      })
      if (!written) return
      ended.set(result.status, (ended.get(result.status) ?? 0) + 1)
      if (result.status === 'completed') return
      log.warn(
        {
          projectId: run.flow.projectId,
          flowId: run.flow.id,
          runId: run.id,
          step: result.error?.step,
          code: result.error?.code,
        },
        `flow run ${result.status}: ${result.error?.message ?? ''}`,
      )
    },
    /** Runs whose end this instance wrote, by final status, since it started (metrics). */
    byStatus: (): Record<string, number> => Object.fromEntries(ended),
  }
}
