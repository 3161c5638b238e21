import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { closeRedis, connectRedis } from '../redis/connect-redis.js'
import {
  assertOpen,
  deliverSafely,
  type MessageHandler,
  type PubSub,
  type PubSubOptions,
  type Unsubscribe,
} from './pubsub.js'

interface Subscription {
  readonly handler: MessageHandler
}

interface Channel {
  readonly subscriptions: Set<Subscription>
  /** The SUBSCRIBE that the first subscription sent; later ones wait for it too. */
  readonly ready: Promise<unknown>
}

interface PendingDelivery {
  /** Subscribers that received the message (PUBLISH's answer); null until Redis answered. */
  needed: number | null
  confirmed: number
  done(): void
}

// A message whose publisher waits for delivery travels as `\u0001<reply channel>\u0001<n>\u0001<message>`;
// every receiver runs its handlers, then publishes `<n>` on the reply channel.
const mark = '\u0001'

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

  // This instance's reply channel, where receivers confirm the messages it waits on.
  const replies = `${prefix}__delivered:${randomUUID()}`
  const pending = new Map<number, PendingDelivery>()
  let sent = 0
  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 2000

  subscriber.on('message', (name: string, raw: string) => {
    if (name === replies) {
      const delivery = pending.get(Number(raw))
      if (delivery && ++delivery.confirmed >= (delivery.needed ?? Infinity)) delivery.done()
      return
    }
    let message = raw
    let confirm: (() => void) | null = null
    if (raw.startsWith(mark)) {
      const second = raw.indexOf(mark, 1)
      const third = raw.indexOf(mark, second + 1)
      if (second > 0 && third > second) {
        const replyTo = raw.slice(1, second)
        const n = raw.slice(second + 1, third)
        message = raw.slice(third + 1)
        confirm = () => void publisher.publish(replyTo, n).catch(onError)
      }
    }
    const channel = channels.get(name)
    if (channel)
      for (const subscription of [...channel.subscriptions]) deliverSafely(subscription.handler, message, onError)
    // Confirmed even with no handler left here: this connection was counted among the receivers.
    confirm?.()
  })
  try {
    await subscriber.subscribe(replies)
  } catch (err) {
    await Promise.all([closeRedis(subscriber), closeRedis(publisher)])
    throw err
  }

  async function publishAndWait(key: string, message: string): Promise<void> {
    const n = ++sent
    let timer: NodeJS.Timeout | undefined
    const delivered = new Promise<void>((resolve) => {
      const delivery: PendingDelivery = {
        needed: null,
        confirmed: 0,
        done: () => {
          clearTimeout(timer)
          pending.delete(n)
          resolve()
        },
      }
      pending.set(n, delivery)
      timer = setTimeout(() => {
        onError(
          new Error(
            `pubsub: ${delivery.needed === null ? '?' : delivery.needed - delivery.confirmed} receiver(s) of ${key} did not confirm within ${deliveryTimeoutMs} ms`,
          ),
        )
        delivery.done()
      }, deliveryTimeoutMs)
      timer.unref()
    })
    try {
      const receivers = await publisher.publish(key, `${mark}${replies}${mark}${n}${mark}${message}`)
      const delivery = pending.get(n)
      if (delivery) {
        delivery.needed = receivers
        if (delivery.confirmed >= receivers) delivery.done()
      }
    } catch (err) {
      pending.get(n)?.done()
      throw err
    }
    await delivered
  }

  return {
    shared: true,
    async publish(channel, message, publishOptions) {
      assertOpen(closed)
      if (publishOptions?.awaitDelivery) return publishAndWait(prefix + channel, message)
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
      for (const delivery of [...pending.values()]) delivery.done()
      await Promise.all([closeRedis(subscriber), closeRedis(publisher)])
    },
  }
}
