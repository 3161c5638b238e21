import type { TimeSource } from '../clock.js'

export interface TtlCacheOptions {
  /** The most entries held; past it the least recently used one goes. */
  readonly maxEntries: number
  /** How long an entry lives after it was set. Reading it does not extend its life. */
  readonly ttlMs: number
  readonly clock: TimeSource
}

/**
 * An in-process LRU cache whose entries also expire, e.g. resolved sessions keyed by token hash. Values
 * read from a store enter through `getOrLoad`, which keeps a value read before an invalidation out of it;
 * `delete`, `deleteWhere` and `clear` are the invalidations.
 */
export interface TtlCache<V> {
  /** The live value, marking it most recently used; undefined when missing or expired. */
  get(key: string): V | undefined
  /**
   * The live value, or else what `load` reads, cached only when no invalidation (`delete` of any key,
   * `deleteWhere`, `clear`) ran while it loaded: such a value may be what the invalidation removed, and
   * would otherwise outlive it for a whole TTL. The caller gets the loaded value either way (its request
   * overlapped the change); null is returned and not cached. Rejects as `load` does.
   */
  getOrLoad(key: string, load: () => Promise<V | null>): Promise<V | null>
  /**
   * Stores the value with a fresh TTL, evicting the least recently used entry when full. Only for a value
   * no invalidation can have overtaken; anything read from a store goes through `getOrLoad`.
   */
  set(key: string, value: V): void
  /** Removes one entry; true when a live one was removed. Counts as an invalidation even when nothing was cached. */
  delete(key: string): boolean
  /** Removes every live entry the predicate picks (e.g. all sessions of a user) and returns how many. An invalidation. */
  deleteWhere(predicate: (key: string, value: V) => boolean): number
  /** Removes everything. An invalidation. */
  clear(): void
  /** Live entries; counting sweeps the expired ones, so it costs a pass over the cache. */
  readonly size: number
}

// How often, at most, a full cache scans itself for expired entries.
const sweepEveryMs = 1000

interface Entry<V> {
  readonly value: V
  readonly expiresAt: number
}

/** Creates an empty cache. Throws RangeError (no AppError code) when maxEntries or ttlMs is not a positive integer. */
export function createTtlCache<V>(options: TtlCacheOptions): TtlCache<V> {
  const { maxEntries, ttlMs, clock } = options
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`)
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a positive integer, got ${ttlMs}`)
  // A Map iterates in insertion order; re-inserting on use keeps the least recently used entry first.
  const entries = new Map<string, Entry<V>>()
  let nextSweepAt = 0
  // Bumped by every invalidation. A load notes it before reading and inserts only if it has not moved;
  // one counter for the whole cache, because deleteWhere's predicate cannot be tested against a value that
  // is still loading. An unrelated invalidation costs an overlapping load nothing but its caching.
  let generation = 0

  function live(key: string, now: number): Entry<V> | undefined {
    const entry = entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAt > now) return entry
    entries.delete(key)
    return undefined
  }

  function sweep(now: number): void {
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key)
    nextSweepAt = now + sweepEveryMs
  }

  // The TTL counts from `since`: for a loaded value, when its load began.
  function insert(key: string, value: V, since: number): void {
    const now = clock.now()
    entries.delete(key)
    entries.set(key, { value, expiresAt: since + ttlMs })
    // Expired entries go before a live one is evicted; the sweep is rationed so a cache that stays
    // full of live entries does not scan itself on every set.
    if (entries.size > maxEntries && now >= nextSweepAt) sweep(now)
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next()
      if (oldest.done) break
      entries.delete(oldest.value)
    }
  }

  function read(key: string): V | undefined {
    // Reading does not renew the TTL: the TTL bounds how stale a cached session may be when the
    // invalidation message was missed, so it must count from when the value was resolved.
    const entry = live(key, clock.now())
    if (!entry) return undefined
    entries.delete(key)
    entries.set(key, entry)
    return entry.value
  }

  return {
    get: read,

    async getOrLoad(key, load) {
      const cached = read(key)
      if (cached !== undefined) return cached
      // Noted before the load reads anything: an invalidation published after this point either bumps
      // the generation before the insert below, or finds the inserted entry and removes it.
      const seen = generation
      const since = clock.now()
      const value = await load()
      if (value !== null && generation === seen) insert(key, value, since)
      return value
    },

    set(key, value) {
      insert(key, value, clock.now())
    },

    delete(key) {
      generation++
      const entry = live(key, clock.now())
      return entry !== undefined && entries.delete(key)
    },

    deleteWhere(predicate) {
      generation++
      const now = clock.now()
      let removed = 0
      for (const [key, entry] of entries) {
        if (entry.expiresAt <= now) entries.delete(key)
        else if (predicate(key, entry.value)) {
          entries.delete(key)
          removed++
        }
      }
      return removed
    },

    clear() {
      generation++
      entries.clear()
    },

    get size() {
      sweep(clock.now())
      return entries.size
    },
  }
}
