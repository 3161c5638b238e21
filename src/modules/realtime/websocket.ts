import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocket, WebSocketServer } from 'ws'
import { AppError } from '../../lib/errors.js'
import {
  closeSignal,
  slowConsumerCloseCode,
  slowConsumerGraceMs,
  type CloseReason,
  type Sink,
  type SinkOptions,
} from './sink.js'

/** What the HTTP server hands a route for an `Upgrade` request (see src/http/server.ts). */
export interface UpgradeRequest {
  readonly socket: Duplex
  readonly head: Buffer
}

/** The upgrade of a request, when the server passed one in the bindings; null for a plain request. */
export function upgradeOf(env: unknown): UpgradeRequest | null {
  const upgrade = (env as { upgrade?: Partial<UpgradeRequest> } | undefined)?.upgrade
  return upgrade && upgrade.socket && Buffer.isBuffer(upgrade.head) ? (upgrade as UpgradeRequest) : null
}

const closeCodes: Partial<Record<CloseReason['error'], number>> = {
  unauthorized: 4401,
  forbidden: 4403,
  not_found: 4404,
  collection_not_found: 4404,
  record_not_found: 4404,
  internal: 1011,
}

/**
 * Accepts WebSocket handshakes for stream routes. Clients only listen: a message from one is ignored, and
 * one over 4 KiB closes the connection (1009).
 */
export function createWebSockets() {
  const server = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: 4096,
  })
  const extraHeaders = new WeakMap<IncomingMessage, string[]>()
  server.on('headers', (headers, request) => {
    headers.push(...(extraHeaders.get(request) ?? []))
  })

  return {
    /** Refuses a request that is not a well-formed WebSocket handshake. Throws invalid_request. */
    assertHandshake(incoming: IncomingMessage): void {
      const upgrade = String(incoming.headers.upgrade ?? '').toLowerCase()
      const key = incoming.headers['sec-websocket-key']
      if (upgrade !== 'websocket') throw new AppError('invalid_request', 'Only a WebSocket upgrade is accepted here')
      if (
        incoming.method !== 'GET' ||
        typeof key !== 'string' ||
        !/^[A-Za-z0-9+/]{22}==$/.test(key) ||
        incoming.headers['sec-websocket-version'] !== '13'
      ) {
        throw new AppError(
          'invalid_request',
          'Malformed WebSocket handshake (GET, Sec-WebSocket-Key, Sec-WebSocket-Version: 13)',
        )
      }
    },

    /** Completes the handshake (101 with `headers`), sends `greeting` and hands the socket over as a sink. */
    accept(
      incoming: IncomingMessage,
      upgrade: UpgradeRequest,
      headers: string[],
      options: SinkOptions & { greeting: unknown },
      ready: (sink: Sink) => void,
    ): void {
      extraHeaders.set(incoming, headers)
      server.handleUpgrade(incoming, upgrade.socket, upgrade.head, (ws) => ready(webSocketSink(ws, options)))
    },
  }
}

/**
 * A sink over one WebSocket: JSON text messages, a ping every `heartbeatMs` (no pong since the last one →
 * cut). A client that lets more than `maxBufferedBytes` wait is closed with `slowConsumerCloseCode`; the
 * close frame waits behind what is buffered, so a client that never drains it is cut after a grace period.
 */
function webSocketSink(ws: WebSocket, options: SinkOptions & { greeting: unknown }): Sink {
  const signal = closeSignal()
  let alive = true
  ws.on('pong', () => {
    alive = true
  })
  ws.on('message', () => {})
  ws.on('error', () => signal.fire())
  ws.on('close', () => signal.fire())
  const heartbeat = options.clock.every(
    options.heartbeatMs,
    () => {
      if (ws.readyState !== WebSocket.OPEN) return
      if (!alive) return terminate()
      if (ws.bufferedAmount > options.maxBufferedBytes) return drop()
      alive = false
      ws.ping()
    },
    { onError: () => terminate() },
  )
  signal.onClose(() => void heartbeat.stop())

  function write(payload: Buffer | string): void {
    if (signal.closed || ws.readyState !== WebSocket.OPEN) return
    // As for SSE: judged before writing, so what waits stays under the cap plus one message.
    if (ws.bufferedAmount > options.maxBufferedBytes) return drop()
    ws.send(payload, { binary: false })
  }

  function terminate(): void {
    ws.terminate()
    signal.fire()
  }

  function drop(): void {
    if (signal.closed) return
    if (ws.readyState === WebSocket.OPEN) {
      ws.close(slowConsumerCloseCode, 'slow consumer')
      options.clock.after(slowConsumerGraceMs, () => ws.terminate())
    } else ws.terminate()
    signal.fire()
  }

  write(JSON.stringify(options.greeting))
  return {
    send(frame) {
      write(frame.websocket())
    },
    close(reason) {
      if (signal.closed) return
      if (reason) write(JSON.stringify({ type: 'stream.closed', ...reason }))
      if (signal.closed) return
      // 1001 "going away" on shutdown; 44xx mirrors the HTTP status of the refusal.
      const code = reason ? (closeCodes[reason.error] ?? 1008) : 1001
      ws.close(code, reason ? reason.error : 'server shutting down')
      signal.fire()
    },
    drop,
    onClose: signal.onClose,
  }
}
