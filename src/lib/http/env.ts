import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Principal } from '../principal.js'

/** Per-request values shared by the HTTP layer and module routes. */
export interface AppVariables {
  /** Set by a route's guard (see guard.ts); absent on public routes. */
  principal?: Principal
  /** The session a session principal came from (the auth module's ActiveSession), set with it by authenticate. */
  session?: unknown
}

/** Node's own request and response, as @hono/node-server passes them to every request. */
export interface AppBindings {
  incoming?: IncomingMessage
  outgoing?: ServerResponse
}

export interface AppEnv {
  Bindings: AppBindings
  Variables: AppVariables
}
