import type { Logger } from '../../lib/log.js'
import { createKeyedListeners } from '../../lib/observers.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { InboxMessage } from './schemas.js'

export type InboxListener = (message: InboxMessage) => void

/** What the realtime module reads a user's channel through (GET /api/v1/notifications/stream). */
export interface InboxChannel {
  /** Starts delivering the user's inbox messages to the listener; returns its removal. */
  listen(projectId: string, userId: string, listener: InboxListener): () => void
}

const channel = 'notifications.live'

/**
 * Each user's realtime channel: a message published on any instance (on the pubsub: memory, or Redis with
 * REDIS_URL) reaches that user's streams on every instance, each once, through this instance's one
 * subscription. Nothing is kept: a user with no stream open misses the live message, not the notification.
 */
export async function createInboxChannel(deps: { pubsub: PubSub; log: Logger }) {
  const listeners = createKeyedListeners<InboxListener>()
  const keyOf = (projectId: string, userId: string) => `${projectId}/${userId}`
  const unsubscribe = await deps.pubsub.subscribe(channel, (raw) => {
    if (listeners.empty) return
    let parsed: { projectId: string; userId: string; message: InboxMessage }
    try {
      parsed = JSON.parse(raw) as typeof parsed
    } catch {
      return
    }
    for (const listener of listeners.of(keyOf(parsed.projectId, parsed.userId))) listener(parsed.message)
  })
  return {
    /** Sends a message to the user's streams on every instance (a failure is logged: the notification is stored already). */
    async publish(projectId: string, userId: string, message: InboxMessage): Promise<void> {
      if (!deps.pubsub.shared && listeners.empty) return
      await deps.pubsub
        .publish(channel, JSON.stringify({ projectId, userId, message }))
        .catch((err: unknown) => deps.log.warn({ err }, 'notifications: publishing a live message failed'))
    },
    listen(projectId: string, userId: string, listener: InboxListener): () => void {
      return listeners.add(keyOf(projectId, userId), listener)
    },
    async close(): Promise<void> {
      listeners.clear()
      await unsubscribe()
    },
  } satisfies InboxChannel & Record<string, unknown>
}

export type InboxChannelService = Awaited<ReturnType<typeof createInboxChannel>>
