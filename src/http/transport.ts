import { randomUUID } from 'node:crypto'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { tagRequestId, type AppBindings } from '../lib/http/index.js'
import { requestLineWriter, type Logger } from '../lib/log.js'
import { isDeprecatedAlias } from './paths.js'
import { securityHeaders } from './security-headers.js'

export type Fetch = (request: Request, env: AppBindings) => Response | Promise<Response>

/** One answered request as the access log line has it (metrics count it): path without the query string. */
export interface RequestSample {
  readonly method: string | undefined
  readonly path: string
  readonly status: number
  readonly seconds: number
}
export type RequestObserver = (sample: RequestSample) => void

const acceptableRequestId = /^[\w.:-]{1,128}$/

/**
 * The Node request listener: the transport conventions of every response, applied before Hono sees
 * the request, so routes keep Hono's single-handler fast path (no global middleware on GET):
 * - `X-Request-ID` (the client's, when it is a sane token, else a new UUID) and `X-API-Version: v1`,
 *   on every response, errors and 404s included;
 * - the security headers (security-headers.ts), which a route may override with its own values;
 * - `Deprecation` and `Link` on the unversioned `/api/…` aliases (removed again by the 404 handler);
 * - one access-log line per request: id, method, path (never the query string), status, duration, and
 *   the same figures to `observe` (metrics), measured once.
 */
export function nodeListener(fetch: Fetch, access: Logger, observe?: RequestObserver): RequestListener {
  const requestLine = requestLineWriter(access)
  const handle = getRequestListener(fetch as (request: Request, env: unknown) => Response | Promise<Response>)
  return (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const started = performance.now()
    const sent = incoming.headers['x-request-id']
    const requestId = typeof sent === 'string' && acceptableRequestId.test(sent) ? sent : randomUUID()
    tagRequestId(incoming, requestId)
    outgoing.setHeader('X-API-Version', 'v1')
    outgoing.setHeader('X-Request-ID', requestId)
    for (const [name, value] of securityHeaders) outgoing.setHeader(name, value)

    const url = incoming.url ?? '/'
    const query = url.indexOf('?')
    const path = query === -1 ? url : url.slice(0, query)
    if (isDeprecatedAlias(path)) {
      outgoing.setHeader('Deprecation', 'true')
      outgoing.setHeader('Link', `</api/v1${path.slice(4)}>; rel="successor-version"`)
    }

    outgoing.once('close', () => {
      const ms = performance.now() - started
      const status = outgoing.writableFinished ? outgoing.statusCode : 0
      requestLine({ reqId: requestId, method: incoming.method, path, status, ms: Math.round(ms * 10) / 10 })
      observe?.({ method: incoming.method, path, status, seconds: ms / 1000 })
    })
    // Registered after Node's own finish handler, which has by now asked to close a `Connection: close`
    // socket. Only where a body is expected: reads (the hot path) carry none.
    if (incoming.method !== 'GET' && incoming.method !== 'HEAD') {
      outgoing.once('finish', () => {
        if (!incoming.complete) lingerBeforeClose(incoming)
      })
    }
    void handle(incoming, outgoing)
  }
}

/** How long a closing connection keeps reading what the client still sends after its answer went out. */
export const lingerMs = 5_000

/**
 * A lingering close, as nginx makes one. Node destroys a `Connection: close` socket as soon as its answer is
 * flushed; when the client is still sending the body (an upload refused part way, 413), the bytes that then
 * arrive make the kernel reset the connection, and a client busy writing (curl) reports the write's broken
 * pipe and loses the answer. Here our side is half-closed, what still arrives is read and dropped, and the
 * socket goes once the client closes its side or after `lingerMs`.
 */
function lingerBeforeClose(incoming: IncomingMessage): void {
  const socket = incoming.socket
  // Only a socket Node is about to destroy (destroySoon waits for 'finish'); a kept-alive one reads on.
  if (socket.destroyed || !socket.listeners('finish').includes(socket.destroy)) return
  socket.removeListener('finish', socket.destroy)
  const timer = setTimeout(() => socket.destroy(), lingerMs)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  socket.once('end', () => socket.destroy())
  socket.once('error', () => socket.destroy())
  // A reader that gave up paused the request; resumed, the parser drops the rest of the body.
  incoming.resume()
}
