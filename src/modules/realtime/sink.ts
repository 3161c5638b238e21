import type { Clock } from '../../lib/clock.js'
import type { ErrorCode } from '../../lib/errors.js'
import type { Frame } from './frame.js'

/** Why the server ends a stream; sent to the client as a last `stream.closed` message. */
export interface CloseReason {
  readonly error: ErrorCode
  readonly message: string
}

/**
 * One open connection, SSE or WebSocket, as the stream logic sees it. Each sink keeps its own heartbeat
 * and drops its connection once more than the cap is waiting to reach a client that does not read: a
 * WebSocket is closed with `slowConsumerCloseCode` (and cut if the client never answers the close), an
 * SSE response is ended by destroying it (what waits for the client is discarded).
 */
export interface Sink {
  /** Writes one serialised event (a record event, a user's inbox message); a sink that is closed ignores it. */
  send(frame: Frame): void
  /** Ends the stream: with a reason, the client is told why first; null is a shutdown (reconnect elsewhere). */
  close(reason: CloseReason | null): void
  /** Ends the stream of a slow consumer (nothing more can reach it in time), without a stream.closed message. */
  drop(): void
  /** Runs once, when the connection is gone for whatever reason. */
  onClose(listener: () => void): void
}

export interface SinkOptions {
  /** What the heartbeat runs on, so tests can drive it. */
  readonly clock: Clock
  readonly heartbeatMs: number
  /** Bytes waiting for the client (in Node and in the socket) beyond which the connection is dropped. */
  readonly maxBufferedBytes: number
}

/**
 * The WebSocket close code of a stream dropped because too much waited for a client that does not read
 * (decision 080): 44xx mirrors an HTTP status elsewhere in this module, and 429 is "too many".
 */
export const slowConsumerCloseCode = 4429

/** How long a dropped WebSocket client has to drain and answer the close before its socket is cut. */
export const slowConsumerGraceMs = 2000

/** Calls each listener once, after `closed` is set; shared by both kinds of sink. */
export function closeSignal() {
  const listeners: (() => void)[] = []
  let closed = false
  return {
    get closed() {
      return closed
    },
    onClose(listener: () => void) {
      if (closed) listener()
      else listeners.push(listener)
    },
    fire() {
      if (closed) return
      closed = true
      for (const listener of listeners.splice(0)) listener()
    },
  }
}
