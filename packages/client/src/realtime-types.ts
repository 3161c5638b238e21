import type { PlinthError } from './errors.js'

/** The system columns every record carries, as a stream shows them (times in Unix seconds). */
export interface StreamRecordBase {
  id: string
  created_at: number
  updated_at: number
  created_by: string | null
  updated_by: string | null
  deleted_at: number | null
  _version: number
}

/**
 * One record event, as the server sends it (docs/realtime.md#events). `record` is what the subscriber could
 * read: its system columns and the fields its allowlist lets through (no computed fields, no expansions).
 * A record that moved out of the subscriber's view arrives as `record.delete`.
 */
export interface RecordEvent<T = Record<string, unknown>> {
  type: 'record.create' | 'record.update' | 'record.delete'
  collection: string
  record: StreamRecordBase & T
  /** When the write happened (Unix seconds). */
  at: number
  /** The write's id (the SSE `id:`); undefined over WebSocket, which does not send it. */
  eventId?: string | undefined
}

/**
 * The connection was lost and made again: events written in between were not delivered (the server keeps
 * no backlog; docs/realtime.md: "there is no replay"). Read again what you keep locally. Delivered before
 * any event of the new connection.
 */
export interface GapEvent {
  type: 'gap'
  collection: string
  /** When the previous connection was lost. */
  since: Date
  /** The last event received before the loss (SSE only), for your logs. */
  lastEventId: string | undefined
  /** Why the previous connection ended, in words. */
  reason: string
}

export type SubscriptionEvent<T = Record<string, unknown>> = RecordEvent<T> | GapEvent

export type SubscriptionState = 'connecting' | 'open' | 'reconnecting' | 'closed'

/** A stream filter: the query language's object or array format, or that JSON as text. */
export type StreamFilter = string | Record<string, unknown> | unknown[]

export interface ReconnectOptions {
  /** The first wait after a loss (default 500 ms); doubled per failed attempt, with jitter. */
  initialDelayMs?: number
  /** The longest wait between attempts (default 30 000 ms). */
  maxDelayMs?: number
  /** Give up after this many failed attempts in a row (default: never). */
  maxAttempts?: number
}

export interface SubscribeOptions {
  /** Only these record ids (up to 100). */
  ids?: string[]
  /** 'auto' (default): WebSocket when a constructor is available, else SSE; SSE also when the socket is refused. */
  transport?: 'auto' | 'websocket' | 'sse'
  /** false: no reconnect, the subscription closes with the connection. */
  reconnect?: ReconnectOptions | false
  /**
   * SSE only: a stream silent this long is taken for dead and made again (default 60 000 ms; the server
   * sends a heartbeat every 25 s). A WebSocket's liveness is the platform's ping/pong.
   */
  idleTimeoutMs?: number
  /** Told of every change of state; `error` with 'closed' when the subscription ended on an error. */
  onState?: (state: SubscriptionState, detail: { transport: 'websocket' | 'sse' | null; error?: PlinthError }) => void
}

export interface Subscription {
  /** The current state; 'closed' is final. */
  readonly state: SubscriptionState
  /** The transport of the open connection, or of the last one. */
  readonly transport: 'websocket' | 'sse' | null
  /**
   * Resolves when the first connection is open (from then on no event is missed); rejects with the
   * PlinthError that ended the subscription before that (unauthorized, forbidden, collection_not_found …).
   */
  readonly ready: Promise<void>
  /** Resolves when the subscription has ended: with the error that ended it, or undefined after close(). */
  readonly closed: Promise<PlinthError | undefined>
  /** Closes the connection and stops reconnecting. Resolves once the connection is gone. */
  close(): Promise<void>
}

/**
 * The parts of a WebSocket the client uses: the platform's (browsers, Node 22+) or the `ws` package's. The
 * handlers take `never` so that every implementation's own event types fit; the client reads `data` of a
 * message event and `code` and `reason` of a close event.
 */
export interface WebSocketLike {
  readonly readyState: number
  onmessage: ((event: never) => void) | null
  onerror: ((event: never) => void) | null
  onclose: ((event: never) => void) | null
  close(code?: number, reason?: string): void
}

export type WebSocketConstructor = new (url: string) => WebSocketLike
