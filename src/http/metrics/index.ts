export { contentType } from './exposition.js'
export { createMetrics, latencyBuckets, type Metrics, type MetricsSources } from './metrics.js'
export { metricsRoutes } from './routes.js'
export { createRouteLabels, templateOf, unmatchedRoute } from './route-label.js'
