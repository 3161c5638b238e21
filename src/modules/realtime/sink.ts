import type { Clock } from '../../lib/clock.js'
import type { ErrorCode } from '../../lib/errors.js'

/** Why the server ends a stream; sent to the client as a last `stream.closed` message. */
export interface CloseReason {
  readonly error: ErrorCode
  readonly message: string
}

/**
 * One open connection, SSE or WebSocket, as the stream logic sees it. Each sink keeps its own heartbeat
 * and drops its connection (without a goodbye: its buffer is full) once more than the cap is waiting to
 * reach a client that does not read.
 */
export interface Sink {
  /** Queues one event (a record event, a user's inbox message); a sink that is closed ignores it. */
  send(message: { readonly type: string }, id: string): void
  /** Ends the stream: with a reason, the client is told why first; null is a shutdown (reconnect elsewhere). */
  close(reason: CloseReason | null): void
  /** Cuts the connection without a goodbye (a slow consumer: nothing more can reach it in time). */
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
