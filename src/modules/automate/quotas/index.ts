export { defaultLimits, type Limits, type QuotaName, type Usage } from './limits.js'
export { quotasRoutes } from './routes.js'
export { createQuotasService, quotaExceeded, type QuotasService, type UsageProvider } from './service.js'
export { createRunsPerHour, type RunsPerHour } from './runs-per-hour.js'
