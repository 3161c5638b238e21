export { realtimeRoutes } from './routes.js'
export { createRealtime, type Realtime, type RealtimeOptions, type StreamCaller } from './service.js'
export { createStreamAuth, type CapabilityPort, type StreamAuth } from './stream-auth.js'
export type { StreamMessage } from './delivery.js'
