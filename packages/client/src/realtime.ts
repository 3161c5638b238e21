import { NetworkError, type PlinthError } from './errors.js'
import type { Connection, ConnectionEnd, ConnectionHandlers } from './realtime-connection.js'
import { openEventStream } from './realtime-sse.js'
import type {
  RecordEvent,
  StreamFilter,
  SubscribeOptions,
  Subscription,
  SubscriptionEvent,
  SubscriptionState,
  WebSocketConstructor,
} from './realtime-types.js'
import { openWebSocketStream } from './realtime-ws.js'
import type { Query, Transport } from './transport.js'

export type * from './realtime-types.js'

export type SubscriptionHandler<T> = (event: SubscriptionEvent<T>) => void

export interface RealtimeOptions {
  /**
   * A WebSocket constructor: the platform's by default (browsers, Node 22+). Node 20 has none: pass the
   * `ws` package's (`import WebSocket from 'ws'`), or streams use Server-Sent Events. `null`: Server-Sent
   * Events only, whatever the platform has.
   */
  WebSocket?: WebSocketConstructor | null | undefined
}

export interface Realtime {
  /**
   * Streams a collection's record events (GET /api/v1/collections/:name/stream), over WebSocket or SSE,
   * reconnecting on its own; after a reconnect a `gap` event says what may have been missed.
   */
  subscribe<T = Record<string, unknown>>(
    collection: string,
    handler: SubscriptionHandler<T>,
    options?: SubscribeOptions,
  ): Subscription
  subscribe<T = Record<string, unknown>>(
    collection: string,
    filter: StreamFilter | undefined,
    handler: SubscriptionHandler<T>,
    options?: SubscribeOptions,
  ): Subscription
}

const defaults = { initialDelayMs: 500, maxDelayMs: 30_000, idleTimeoutMs: 60_000 }

/** The realtime part of the client, over one Transport. */
export function createRealtime(transport: Transport, options: RealtimeOptions = {}): Realtime {
  const platformSocket = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  const WebSocketImpl = options.WebSocket === null ? undefined : (options.WebSocket ?? platformSocket)
  return {
    subscribe<T>(
      collection: string,
      second: StreamFilter | undefined | SubscriptionHandler<T>,
      third?: SubscriptionHandler<T> | SubscribeOptions,
      fourth?: SubscribeOptions,
    ): Subscription {
      if (typeof second === 'function')
        return subscribe(transport, WebSocketImpl, collection, undefined, second, third as SubscribeOptions)
      return subscribe(transport, WebSocketImpl, collection, second, third as SubscriptionHandler<T>, fourth)
    },
  }
}

function subscribe<T>(
  transport: Transport,
  WebSocketImpl: WebSocketConstructor | undefined,
  collection: string,
  filter: StreamFilter | undefined,
  handler: SubscriptionHandler<T>,
  options: SubscribeOptions = {},
): Subscription {
  const path = `/api/v1/collections/${encodeURIComponent(collection)}/stream`
  const query: Query = {
    filter: filter === undefined ? undefined : typeof filter === 'string' ? filter : JSON.stringify(filter),
    ids: options.ids?.join(','),
  }
  const reconnect = options.reconnect === false ? null : { ...defaults, ...options.reconnect }
  const idleTimeoutMs = options.idleTimeoutMs ?? defaults.idleTimeoutMs
  const want = options.transport ?? 'auto'
  if (want === 'websocket' && !WebSocketImpl) {
    throw new Error('subscribe: no WebSocket here; pass one in createClient({ WebSocket }) or use transport "sse"')
  }
  const useSocket = want !== 'sse' && WebSocketImpl !== undefined

  let state: SubscriptionState = 'connecting'
  let current: Connection | null = null
  let lastTransport: 'websocket' | 'sse' | null = null
  let timer: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let everOpened = false
  let lostAt: Date | undefined
  let lostBecause = ''
  let lastEventId: string | undefined
  let settleReady!: (error?: PlinthError) => void
  let settleClosed!: (error: PlinthError | undefined) => void
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = (error) => (error ? reject(error) : resolve())
  })
  ready.catch(() => {}) // a caller that never awaits ready must not see an unhandled rejection
  const closed = new Promise<PlinthError | undefined>((resolve) => {
    settleClosed = resolve
  })

  const setState = (next: SubscriptionState, error?: PlinthError) => {
    state = next
    options.onState?.(next, error ? { transport: lastTransport, error } : { transport: lastTransport })
  }
  const deliver = (event: SubscriptionEvent<T>) => {
    try {
      handler(event)
    } catch (err) {
      // Like a DOM event listener: one handler's error is reported, and the stream goes on.
      queueMicrotask(() => {
        throw err
      })
    }
  }
  const finish = (error: PlinthError | undefined) => {
    if (state === 'closed') return
    clearTimeout(timer)
    setState('closed', error)
    settleReady(error ?? new NetworkError(null, 'aborted', 'The subscription was closed before it opened'))
    settleClosed(error)
  }

  const handlersFor = (via: 'websocket' | 'sse'): ConnectionHandlers => ({
    open() {
      lastTransport = via
      failures = 0
      if (lostAt) {
        deliver({ type: 'gap', collection, since: lostAt, lastEventId, reason: lostBecause })
        lostAt = undefined
      }
      everOpened = true
      setState('open')
      settleReady()
    },
    message(message, eventId) {
      if (state === 'closed' || !message.type.startsWith('record.')) return
      if (eventId !== undefined) lastEventId = eventId
      deliver({ ...(message as unknown as RecordEvent<T>), eventId })
    },
    end: (how) => ended(via, how),
  })

  const ended = (via: 'websocket' | 'sse', how: ConnectionEnd) => {
    current = null
    if (state === 'closed') return
    if (via === 'websocket' && how.beforeOpen) return diagnose()
    if (state === 'open') {
      lostAt = new Date()
      lostBecause = how.reason
    }
    if (!how.retry) return finish(how.error)
    retryLater(how)
  }

  const retryLater = (how: ConnectionEnd) => {
    failures += 1
    if (!reconnect || (reconnect.maxAttempts !== undefined && failures > reconnect.maxAttempts)) {
      return finish(
        how.error ?? new NetworkError(null, 'disconnected', `The stream of ${collection} ended: ${how.reason}`),
      )
    }
    const waiting = everOpened ? 'reconnecting' : 'connecting'
    if (state !== waiting) setState(waiting)
    const ceiling = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * 2 ** (failures - 1))
    // Half fixed, half random: instances restarting together are not hit by every client at once.
    const delay = Math.max(ceiling / 2 + Math.random() * (ceiling / 2), (how.retryAfter ?? 0) * 1000)
    timer = setTimeout(connect, delay)
  }

  // A socket that failed before it opened: the platform hides the status, so ask the same URL over HTTP.
  // A refusal there is the answer; a live SSE stream is used as it is (auto) or dropped (websocket only).
  const diagnose = () => {
    current = openEventStream(
      transport,
      path,
      query,
      {
        ...handlersFor('sse'),
        open() {
          if (want === 'auto') return handlersFor('sse').open()
          void current?.close()
          current = null
          retryLater({ retry: true, reason: 'the WebSocket was refused while the stream answers over HTTP' })
        },
      },
      idleTimeoutMs,
    )
  }

  const connect = () => {
    if (state === 'closed') return
    if (!useSocket) {
      current = openEventStream(transport, path, query, handlersFor('sse'), idleTimeoutMs)
      return
    }
    const credential = transport.credential()
    // A socket cannot send headers: the credential and the project (X-Project-Id) ride in the query.
    const url = transport
      .url(path, { ...query, token: credential, project: transport.project ?? undefined })
      .replace(/^http/, 'ws')
    current = openWebSocketStream(WebSocketImpl, url, handlersFor('websocket'))
  }

  connect()
  return {
    get state() {
      return state
    },
    get transport() {
      return lastTransport
    },
    ready,
    closed,
    async close() {
      const connection = current
      current = null
      finish(undefined)
      await connection?.close()
    },
  }
}
