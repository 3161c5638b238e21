import type { Security } from '../../lib/http/index.js'
import type { AppModule } from '../../lib/module.js'
import { realtimeRoutes } from './routes.js'
import { createRealtime, type RealtimeDeps } from './service.js'
import { createStreamAuth, type CapabilityPort } from './stream-auth.js'

/** Realtime record streams (SSE and WebSocket); a stream's caller is a credential or a capability token. */
export async function createRealtimeModule(
  deps: RealtimeDeps & { authenticate: Security['authenticate']; capabilities: CapabilityPort },
) {
  const { authenticate, capabilities, ...rest } = deps
  const service = await createRealtime(rest)
  const streamAuth = createStreamAuth(authenticate, capabilities)
  return {
    service,
    routers: () => [realtimeRoutes(service, streamAuth)],
    close: () => service.close(),
  } satisfies AppModule
}
