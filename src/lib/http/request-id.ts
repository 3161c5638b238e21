import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import type { AppEnv } from './env.js'

const requestIdKey = Symbol('plinth.requestId')

type Tagged = IncomingMessage & { [requestIdKey]?: string }

/** Records the id the transport assigned to this request (see http/transport.ts). */
export function tagRequestId(incoming: IncomingMessage, id: string): void {
  ;(incoming as Tagged)[requestIdKey] = id
}

/** The id of the request being handled, as sent in its X-Request-ID response header. */
export function requestIdOf(c: Context<AppEnv>): string {
  const incoming = c.env?.incoming as Tagged | undefined
  return incoming?.[requestIdKey] ?? 'unassigned'
}
