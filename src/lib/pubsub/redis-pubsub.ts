import type { Redis } from 'ioredis'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import { assertOpen, deliverSafely, type MessageHandler, type PubSub, type PubSubOptions, type Unsubscribe } from './pubsub.js'

interface Subscription {
  readonly handler: MessageHandler
}

interface Channel {
  readonly subscriptions: Set<Subscription>
  /** The SUBSCRIBE that the first subscription sent; later ones wait for it too. */
  readonly ready: Promise<unknown>
}

/**
 * A PubSub shared by every instance using the same Redis and prefix. Uses two connections, because a
 * connection in subscriber mode cannot publish. Channels are sent to Redis as `${prefix}${channel}`.
 * Throws Error (no AppError code) when Redis cannot be reached, and from its methods once closed.
 */
export async function createRedisPubSub(url: string, prefix: string, options: PubSubOptions = {}): Promise<PubSub> {
  const onError = options.onError ?? (() => {})
  const publisher = await connectRedis(url, 'publisher', onError)
  let subscriber: Redis
  try {
    subscriber = await connectRedis(url, 'subscriber', onError)
  } catch (err) {
    await closeRedis(publisher)
    throw err
  }

  // Keyed by the prefixed name, which is what Redis hands back with each message.
  const channels = new Map<string, Channel>()
  let closed = false

  subscriber.on('message', (name: string, message: string) => {
    const channel = channels.get(name)
    if (!channel) return
    for (const subscription of [...channel.subscriptions]) deliverSafely(subscription.handler, message, onError)
  })

  return {
    shared: true,
    async publish(channel, message) {
      assertOpen(closed)
      await publisher.publish(prefix + channel, message)
    },

    async subscribe(name, handler): Promise<Unsubscribe> {
      assertOpen(closed)
      const key = prefix + name
      const subscription: Subscription = { handler }
      // Decisions are taken synchronously and commands go out in call order on one connection, so a
      // SUBSCRIBE and an UNSUBSCRIBE of the same channel can never overtake each other.
      let channel = channels.get(key)
      if (!channel) {
        channel = { subscriptions: new Set(), ready: subscriber.subscribe(key) }
        channels.set(key, channel)
      }
      channel.subscriptions.add(subscription)
      const unsubscribe = async () => {
        const current = channels.get(key)
        if (current !== channel || !current.subscriptions.delete(subscription)) return
        if (current.subscriptions.size > 0) return
        channels.delete(key)
        if (!closed) await subscriber.unsubscribe(key)
      }
      try {
        await channel.ready
      } catch (err) {
        await unsubscribe().catch(() => {})
        throw err
      }
      return unsubscribe
    },

    async close() {
      if (closed) return
      closed = true
      channels.clear()
      await Promise.all([closeRedis(subscriber), closeRedis(publisher)])
    },
  }
}
