import { defaultLimits, type Limits } from '../quotas/index.js'

/** The run-time quotas (automation spec "Quotas"), as the quotas service gives them. */
export type RunLimits = Pick<Limits, 'maxConcurrentRuns' | 'maxExecutionMs' | 'maxRunsPerHour' | 'maxPendingRuns'>
export interface RunQuotas {
  limits(projectId: string): Promise<RunLimits>
}
export const defaultRunLimits: RunLimits = {
  maxConcurrentRuns: defaultLimits.maxConcurrentRuns,
  maxExecutionMs: defaultLimits.maxExecutionMs,
  maxRunsPerHour: defaultLimits.maxRunsPerHour,
  maxPendingRuns: defaultLimits.maxPendingRuns,
}
