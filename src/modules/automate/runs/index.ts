export { createRuns, type Runs, type RunsDeps } from './create-runs.js'
export { defaultRunLimits, type RunLimits, type RunQuotas } from './runner.js'
export type { RunsService } from './runs-service.js'
