import {
  assertOpen,
  deliverSafely,
  type MessageHandler,
  type PubSub,
  type PubSubOptions,
  type Unsubscribe,
} from './pubsub.js'

// One object per subscribe call, so the same function subscribed twice is two subscriptions.
interface Subscription {
  readonly handler: MessageHandler
}

/** A PubSub for the embedded mode: one process, nothing shared. Throws Error once closed (no AppError code). */
export function createMemoryPubSub(options: PubSubOptions = {}): PubSub {
  const onError = options.onError ?? (() => {})
  const channels = new Map<string, Set<Subscription>>()
  let closed = false

  return {
    shared: false,
    async publish(channel, message, publishOptions) {
      assertOpen(closed)
      const recipients = [...(channels.get(channel) ?? [])]
      if (recipients.length === 0) return
      // Delivered on a later turn, as Redis would: a handler never runs inside the publisher's call stack,
      // and only those subscribed when the message was published receive it.
      const delivered = new Promise<void>((resolve) =>
        setImmediate(() => {
          const current = channels.get(channel)
          for (const subscription of recipients) {
            if (current?.has(subscription)) deliverSafely(subscription.handler, message, onError)
          }
          resolve()
        }),
      )
      if (publishOptions?.awaitDelivery) await delivered
    },

    async subscribe(channel, handler): Promise<Unsubscribe> {
      assertOpen(closed)
      const subscription: Subscription = { handler }
      let set = channels.get(channel)
      if (!set) {
        set = new Set()
        channels.set(channel, set)
      }
      set.add(subscription)
      return async () => {
        const current = channels.get(channel)
        if (!current?.delete(subscription)) return
        if (current.size === 0) channels.delete(channel)
      }
    },

    async close() {
      closed = true
      channels.clear()
    },
  }
}
