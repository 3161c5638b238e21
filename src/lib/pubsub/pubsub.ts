/** Receives one message published on a channel the handler subscribed to. */
export type MessageHandler = (message: string) => void

/** Removes one subscription. Idempotent; resolves once no further message reaches its handler. */
export type Unsubscribe = () => Promise<void>

/**
 * Fire-and-forget broadcast between the instances of one deployment, e.g. "session X revoked" so every
 * instance drops its cached copy. Delivery is at most once: a message published while an instance is
 * disconnected is lost, so what a subscriber caches must also expire on its own (a TTL).
 */
export interface PubSub {
  /** True when messages reach other instances (Redis); false when this process is alone (memory). */
  readonly shared: boolean
  /**
   * Sends a message to every current subscriber of the channel, in every instance. With `awaitDelivery`,
   * resolves only once every subscriber that received it has run its handlers (each Redis instance
   * confirms), so a cache invalidation has taken effect everywhere when the caller answers; an instance
   * that does not confirm within `deliveryTimeoutMs` (one that stopped) is reported to `onError` and not
   * waited for longer.
   */
  publish(channel: string, message: string, options?: PublishOptions): Promise<void>
  /** Starts delivery to the handler; resolves once messages published from now on will reach it. */
  subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe>
  /** Drops every subscription and releases connections. Idempotent. */
  close(): Promise<void>
}

export interface PubSubOptions {
  /** Told about a handler that threw and, for Redis, about connection errors; defaults to ignoring them. */
  readonly onError?: (err: unknown) => void
  /** How long a publish with `awaitDelivery` waits for instances to confirm; 2000 ms by default. */
  readonly deliveryTimeoutMs?: number
}

export interface PublishOptions {
  readonly awaitDelivery?: boolean
}

/** Calls one handler, so that a throwing handler neither stops the others nor breaks the transport. */
export function deliverSafely(handler: MessageHandler, message: string, onError: (err: unknown) => void): void {
  try {
    handler(message)
  } catch (err) {
    onError(err)
  }
}

/** Throws a plain Error (a programming mistake, no AppError code) when the PubSub was closed. */
export function assertOpen(closed: boolean): void {
  if (closed) throw new Error('PubSub is closed')
}
