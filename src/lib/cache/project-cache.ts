import type { PubSub } from '../pubsub/index.js'

export interface ProjectCacheOptions<T> {
  readonly pubsub: PubSub
  /** The pub/sub channel its invalidations travel on; one per cache, shared by every instance of it. */
  readonly channel: string
  /** Reads a project's value from the store. A rejection reaches the callers waiting on it and is not kept. */
  readonly load: (projectId: string) => Promise<T>
}

/**
 * One value per project (its roles, settings, collections), read once and kept until a change to it is
 * invalidated on any instance. Entries do not expire: every change goes through `invalidate`.
 */
export interface ProjectCache<T> {
  /** The project's value: the one cached or being loaded, else a new load. Rejects as `load` does. */
  get(projectId: string): Promise<T>
  /**
   * Drops the project's value here and on every instance sharing the channel, and resolves once each has
   * (the publish awaits delivery, decision 010). Call it after the change is written. Throws Error (no
   * AppError code) when the pub/sub is closed.
   */
  invalidate(projectId: string): Promise<void>
  /** Stops hearing invalidations and empties the cache; a `get` afterwards loads and keeps nothing. Idempotent. */
  close(): Promise<void>
}

/**
 * Creates the cache and subscribes it to its channel (rejects as the pub/sub's subscribe does). It has no race with a load in flight (decision 013):
 * the load's promise is put in the map in the same turn it is started, before any message can be handled,
 * so an invalidation that lands while the load reads removes it; the caller already waiting gets what was
 * read, and the next caller starts a read after the change was written.
 */
export async function createProjectCache<T>(options: ProjectCacheOptions<T>): Promise<ProjectCache<T>> {
  const { pubsub, channel, load } = options
  const entries = new Map<string, Promise<T>>()
  let closed = false
  const unsubscribe = await pubsub.subscribe(channel, (projectId) => void entries.delete(projectId))

  return {
    get(projectId) {
      const cached = entries.get(projectId)
      if (cached) return cached
      const entry = load(projectId)
      if (closed) return entry
      entries.set(projectId, entry)
      // Only this entry: an invalidation may already have replaced it with a newer load that must stay.
      entry.catch(() => {
        if (entries.get(projectId) === entry) entries.delete(projectId)
      })
      return entry
    },

    async invalidate(projectId) {
      entries.delete(projectId)
      await pubsub.publish(channel, projectId, { awaitDelivery: true })
    },

    async close() {
      if (closed) return
      closed = true
      entries.clear()
      await unsubscribe()
    },
  }
}
