import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * Per-request values shared by the HTTP layer and module routes.
 * Later capabilities add theirs here (principal, project) so every route sees one typed context.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AppVariables {}

/** Node's own request and response, as @hono/node-server passes them to every request. */
export interface AppBindings {
  incoming?: IncomingMessage
  outgoing?: ServerResponse
}

export interface AppEnv {
  Bindings: AppBindings
  Variables: AppVariables
}
