import { errorFor, type PlinthError } from './errors.js'

/** A message as a stream sends it: a record event, the greeting, or the last `stream.closed`. */
export interface StreamMessage {
  type: string
  [key: string]: unknown
}

/** How one connection ended, and whether making another can help. */
export interface ConnectionEnd {
  /** The refusal, when the server gave one (handshake status, `stream.closed`). */
  error?: PlinthError | undefined
  /** false: the server said no (rights, a bad filter, no such collection); another try gets the same. */
  retry: boolean
  /** In words, for the gap event and logs. */
  reason: string
  /** A WebSocket that ended before it opened: the platform hides why, so the caller asks over HTTP. */
  beforeOpen?: boolean
  /** Seconds the server asked to wait (429 Retry-After). */
  retryAfter?: number | undefined
}

export interface ConnectionHandlers {
  /** The stream is live: from now on no event is missed. */
  open(): void
  message(message: StreamMessage, eventId: string | undefined): void
  /** Called once, whatever ended the connection (not after close()). */
  end(end: ConnectionEnd): void
}

/** One connection, SSE or WebSocket. */
export interface Connection {
  readonly transport: 'websocket' | 'sse'
  /** Ends it on the caller's behalf; resolves once it is gone. `end` is not called. */
  close(): Promise<void>
}

const statusOfCode: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  collection_not_found: 404,
  record_not_found: 404,
  invalid_request: 400,
}

/** The end a `stream.closed` message announces: a typed error; retried only for a server error. */
export function endOfClosedMessage(message: StreamMessage): ConnectionEnd {
  const code = typeof message.error === 'string' ? message.error : 'internal'
  const text = typeof message.message === 'string' ? message.message : `The server closed the stream (${code})`
  const status = statusOfCode[code] ?? 500
  return { error: errorFor(status, code, text, {}), retry: status >= 500, reason: `stream.closed: ${code}` }
}

/** Whether another attempt can help after an HTTP refusal (or no answer: status null). */
export function retryableStatus(status: number | null): boolean {
  return status === null || status === 408 || status === 429 || status >= 500
}
