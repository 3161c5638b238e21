import type { EventBus } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { createKeyedListeners } from '../../lib/observers.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { ApiRecord, RecordEvent, RecordEvents } from '../records/index.js'

export const recordEventTypes = ['record.create', 'record.update', 'record.delete'] as const
export type RecordEventType = (typeof recordEventTypes)[number]

/** A record event as it travels between instances: the write's before and after, every field. */
export interface PublishedEvent {
  /** One id per write, the same on every instance (the SSE `id:`). */
  readonly id: string
  readonly type: RecordEventType
  readonly projectId: string
  readonly collection: string
  readonly before: ApiRecord | null
  readonly after: ApiRecord | null
  readonly at: number
}

export type Listener = (event: PublishedEvent) => void

const channel = 'realtime.records'

/**
 * Fans record events out to the streams of every instance. A write's in-process event is published on the
 * pubsub (memory, or Redis with REDIS_URL) and streams are fed only from the pubsub subscription, never
 * from the in-process event directly: every instance, the writer's included, receives each event exactly
 * once through its one subscription, so each stream sees it once.
 */
export async function createHub(deps: { events: EventBus<RecordEvents>; pubsub: PubSub; log: Logger }) {
  const listeners = createKeyedListeners<Listener>()
  const keyOf = (projectId: string, collection: string) => `${projectId}/${collection}`

  const unsubscribe = await deps.pubsub.subscribe(channel, (message) => {
    if (listeners.empty) return // no stream here: not even worth parsing
    let event: PublishedEvent
    try {
      event = JSON.parse(message) as PublishedEvent
    } catch {
      return
    }
    for (const listener of listeners.of(keyOf(event.projectId, event.collection))) listener(event)
  })

  const offs = recordEventTypes.map((type) =>
    deps.events.on(type, (event: RecordEvent) => {
      // Alone (in-memory pubsub) with no stream open here, nobody can receive it: skip the serialising.
      if (!deps.pubsub.shared && listeners.empty) return
      const published: PublishedEvent = {
        id: newId(),
        type,
        projectId: event.projectId,
        collection: event.collection,
        before: event.before,
        after: event.after,
        at: event.at,
      }
      deps.pubsub
        .publish(channel, JSON.stringify(published))
        .catch((err: unknown) => deps.log.warn({ err, event: type }, 'realtime: publishing a record event failed'))
    }),
  )

  return {
    /** Starts delivering one collection's events to the listener; returns its removal. */
    listen(projectId: string, collection: string, listener: Listener): () => void {
      return listeners.add(keyOf(projectId, collection), listener)
    },

    /** Stops publishing and receiving. */
    async close(): Promise<void> {
      for (const off of offs) off()
      listeners.clear()
      await unsubscribe()
    },
  }
}

export type Hub = Awaited<ReturnType<typeof createHub>>
