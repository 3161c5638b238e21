import { randomUUID } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { createServer, STATUS_CODES, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { ErrorCode } from '../lib/errors.js'
import { tagRequestId, type AppBindings } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import { securityHeaders } from './security-headers.js'
import { nodeListener, type Fetch, type RequestObserver } from './transport.js'

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly url: string
  /** Stops accepting, lets in-flight requests finish for up to `timeoutMs`, then cuts what remains. */
  stop(timeoutMs: number): Promise<void>
}

export interface ListenOptions {
  host: string
  /** 0 picks a free port. */
  port: number
  log: Logger
  /** The request log; defaults to `log`. */
  access?: Logger
  /** Hears of every answered request, upgrades included, with the access log's figures (metrics). */
  observe?: RequestObserver
}

/**
 * What a request handler finds in its bindings beyond Node's request and response:
 * - `stopping`, aborted when the server begins to stop, so long-lived responses (event streams) end at
 *   once instead of holding the shutdown until its timeout;
 * - `upgrade`, on a request that asked to switch protocols (WebSocket): the raw socket and the bytes read
 *   past the headers. A handler that takes the socket over answers with the `x-hono-already-sent` header;
 *   any other answer is written to the socket as a plain HTTP response, and the socket is closed.
 */
export interface ServerBindings extends AppBindings {
  stopping?: AbortSignal
  upgrade?: { socket: Duplex; head: Buffer }
}

const acceptableRequestId = /^[\w.:-]{1,128}$/

/** The socket could not be opened for a reason the operator fixes with a setting; the message says which. */
export class ListenError extends Error {
  override name = 'ListenError'
}

/** Known reasons a listen fails, as one line naming the address; anything else is passed on as it is. */
function listenError(err: Error & { code?: string }, host: string, port: number): Error {
  const messages: Record<string, string> = {
    EADDRINUSE: `port ${port} on ${host} is already in use (stop the process that holds it, or set PORT)`,
    EACCES: `not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges; set PORT)`,
    EADDRNOTAVAIL: `cannot listen on ${host} port ${port}: not an address of this machine (set HOST)`,
  }
  const message = err.code ? messages[err.code] : undefined
  return message ? new ListenError(message, { cause: err }) : err
}

/**
 * The most a request line and its headers may take together. Node's default, 16 KiB, is less than the
 * 16 KiB JSON filter docs/query-language.md allows once percent-encoded (`%XX` for every byte: 48 KiB);
 * 64 KiB holds such a filter with room for the other parameters and headers, and still bounds what one
 * connection makes the parser buffer.
 */
export const maxHeaderBytes = 64 * 1024

/**
 * How long an idle keep-alive connection stays open. Node's 5 s is shorter than what clients and proxies
 * keep a pooled connection for (load balancers commonly 60 s, undici the server's hint less 2 s): when the
 * server closes first, the client's next request on that socket meets a reset (ECONNRESET, or a 502 from a
 * proxy). Longer than the usual 60 s of load balancers, as their vendors advise.
 */
export const keepAliveTimeoutMs = 65_000

/** How long a connection whose request the parser refused stays open for the client to read the answer. */
const clientErrorGraceMs = 2000

/**
 * Serves `fetch` over HTTP and resolves once the socket accepts connections. Rejects with ListenError
 * when the port is taken, not allowed, or the host is not local.
 */
export function listen(fetch: Fetch, options: ListenOptions): Promise<RunningServer> {
  const { log } = options
  const access = options.access ?? log
  const stopping = new AbortController()
  // Every open stream listens for the stop; there may be thousands.
  setMaxListeners(0, stopping.signal)
  const withSignal: Fetch = (request, env) => fetch(request, Object.assign(env, { stopping: stopping.signal }))
  const upgraded = new Set<Duplex>()
  return new Promise((resolve, reject) => {
    const server = createServer(
      { maxHeaderSize: maxHeaderBytes, keepAliveTimeout: keepAliveTimeoutMs },
      nodeListener(withSignal, access, options.observe),
    )
    server.on('clientError', clientErrorListener(access))
    server.on('upgrade', upgradeListener(fetch, access, stopping.signal, upgraded, options.observe))
    const failed = (err: Error) => reject(listenError(err, options.host, options.port))
    server.once('error', failed)
    server.listen(options.port, options.host, () => {
      server.off('error', failed)
      const address = server.address() as AddressInfo
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
      resolve({
        server,
        port: address.port,
        url: `http://${shownHost}:${address.port}`,
        stop: (timeoutMs) => {
          stopping.abort()
          return stopServer(server, timeoutMs, log, upgraded)
        },
      })
    })
  })
}

/**
 * Hands an `Upgrade` request to the app like any other request (same routes, guards and error envelope),
 * with the socket in `env.upgrade`. Logs one access line per upgrade (path without the query string, which
 * may carry a token), as the transport does for other requests.
 */
function upgradeListener(
  fetch: Fetch,
  access: Logger,
  stopping: AbortSignal,
  upgraded: Set<Duplex>,
  observe: RequestObserver | undefined,
) {
  return (incoming: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const started = performance.now()
    const sent = incoming.headers['x-request-id']
    const requestId = typeof sent === 'string' && acceptableRequestId.test(sent) ? sent : randomUUID()
    tagRequestId(incoming, requestId)
    const url = incoming.url ?? '/'
    const query = url.indexOf('?')
    const path = query === -1 ? url : url.slice(0, query)
    const logLine = (status: number) => {
      const ms = performance.now() - started
      access.info({ reqId: requestId, method: incoming.method, path, status, ms: Math.round(ms * 10) / 10 }, 'request')
      observe?.({ method: incoming.method, path, status, seconds: ms / 1000 })
    }

    upgraded.add(socket)
    socket.once('close', () => upgraded.delete(socket))
    // A client that goes away mid-handshake must not take the process down.
    socket.on('error', () => socket.destroy())
    if (stopping.aborted) {
      writeResponse(
        socket,
        503,
        requestId,
        { 'Content-Type': 'application/json' },
        '{"error":"service_unavailable","message":"The server is stopping","details":{}}',
      )
      return logLine(503)
    }

    let request: Request
    try {
      const headers = new Headers()
      for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2)
        headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!)
      request = new Request(new URL(url, `http://${incoming.headers.host ?? 'localhost'}`), {
        method: incoming.method,
        headers,
      })
    } catch {
      writeResponse(socket, 400, requestId, {}, '')
      return logLine(400)
    }
    const env: ServerBindings = { incoming, stopping, upgrade: { socket, head } }
    Promise.resolve(fetch(request, env))
      .then(async (response) => {
        if (response.headers.has('x-hono-already-sent')) return logLine(101)
        const headers: Record<string, string> = {}
        response.headers.forEach((value, name) => {
          headers[name] = value
        })
        writeResponse(socket, response.status, requestId, headers, Buffer.from(await response.arrayBuffer()))
        logLine(response.status)
      })
      .catch(() => {
        writeResponse(socket, 500, requestId, {}, '')
        logLine(500)
      })
  }
}

/**
 * Answers a request Node's parser refused before the app saw it, in the error envelope with the headers
 * of every response (Node's own answer is a bare status line): 431 when the request line and headers pass
 * maxHeaderBytes, 413 for oversized chunk extensions, 408 when the headers took too long, 400 for
 * anything malformed. The parser never read the client's X-Request-ID, so the id is always a new one.
 * Nothing is written once a response has begun on the socket. Node's own handler destroys the socket at
 * once, which can reset the connection before the client reads the answer while it is still sending; here
 * the answer ends our side, what the client still sends is read and dropped (the failed parser reports
 * each chunk again, ignored), and a client that never closes its side is cut after a grace period.
 */
function clientErrorListener(access: Logger) {
  const answered = new WeakSet<Duplex>()
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (answered.has(socket)) return
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy()
      return
    }
    answered.add(socket)
    const requestId = randomUUID()
    const [status, code, message, details] = clientErrorAnswer(err.code)
    writeResponse(
      socket,
      status,
      requestId,
      { 'Content-Type': 'application/json' },
      JSON.stringify({ error: code, message, details }),
    )
    setTimeout(() => socket.destroy(), clientErrorGraceMs).unref()
    access.info({ reqId: requestId, status, reason: err.code }, 'request refused by the HTTP parser')
  }
}

function clientErrorAnswer(code: string | undefined): [number, ErrorCode, string, Record<string, unknown>] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [
        431,
        'headers_too_large',
        `The request line and headers exceed ${maxHeaderBytes} bytes (a long query string counts)`,
        { limit: maxHeaderBytes },
      ]
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'payload_too_large', 'Chunk extensions too large', {}]
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'request_timeout', 'The request was not received in time', {}]
    default:
      return [400, 'invalid_request', 'Malformed HTTP request', {}]
  }
}

/** A plain HTTP/1.1 answer on a raw socket, then the socket closed. */
function writeResponse(
  socket: Duplex,
  status: number,
  requestId: string,
  headers: Record<string, string>,
  body: string | Buffer,
): void {
  if (socket.destroyed) return
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`]
  const all: Record<string, string> = {
    ...headers,
    'X-API-Version': 'v1',
    'X-Request-ID': requestId,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  }
  const own = new Set(Object.keys(all).map((name) => name.toLowerCase()))
  for (const [name, value] of securityHeaders) if (!own.has(name.toLowerCase())) all[name] = value
  for (const [name, value] of Object.entries(all)) lines.push(`${name}: ${value}`)
  socket.end(
    Buffer.concat([
      Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'),
      Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    ]),
  )
}

function stopServer(server: Server, timeoutMs: number, log: Logger, upgraded: Set<Duplex>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      log.warn({ timeoutMs }, 'shutdown timeout reached; closing open connections')
      server.closeAllConnections()
      // Upgraded sockets (WebSocket) left the HTTP server's bookkeeping; close() still waits for them.
      for (const socket of upgraded) socket.destroy()
    }, timeoutMs)
    // Keep-alive connections hold close() open; drop each one as soon as its request is answered.
    const sweep = setInterval(() => server.closeIdleConnections(), 50)
    server.close(() => {
      clearTimeout(timer)
      clearInterval(sweep)
      resolve()
    })
    server.closeIdleConnections()
  })
}
