import type { Readable } from 'node:stream'
import type { ObjectStorage } from '../../lib/storage/index.js'

/** One opened bucket, closed once retired and no request is under way on it. */
interface Lease {
  storage: ObjectStorage
  retire(): void
  close(): Promise<void>
}

/**
 * Counts the requests under way on `storage` (a stream read counts until it closes), so a client retired
 * while an upload or a download still uses it is closed only after them rather than cut off.
 */
function lease(inner: ObjectStorage): Lease {
  let active = 0
  let retired = false
  let closed: Promise<void> | null = null
  const close = () => (closed ??= inner.close().catch(() => undefined))
  const release = () => {
    active--
    if (retired && active === 0) void close()
  }
  const run = async <T>(work: () => Promise<T>): Promise<T> => {
    active++
    try {
      return await work()
    } finally {
      release()
    }
  }
  const storage: ObjectStorage = {
    kind: inner.kind,
    exclusiveUploads: inner.exclusiveUploads,
    presignPut: (key, options) => run(() => inner.presignPut(key, options)),
    presignGet: (key, options) => run(() => inner.presignGet(key, options)),
    put: (key, body, options) => run(() => inner.put(key, body, options)),
    head: (key) => run(() => inner.head(key)),
    delete: (key) => run(() => inner.delete(key)),
    copy: (from, to) => run(() => inner.copy(from, to)),
    list: (prefix, limit) => run(() => inner.list(prefix, limit)),
    async get(key) {
      active++
      let stream: Readable | null
      try {
        stream = await inner.get(key)
      } catch (err) {
        release()
        throw err
      }
      if (stream === null) release()
      else stream.once('close', release)
      return stream
    },
    // The cache owns the client: a holder's close is a no-op.
    close: async () => {},
  }
  return {
    storage,
    retire() {
      retired = true
      if (active === 0) void close()
    },
    close,
  }
}

/** Opened connection buckets, reused across requests (files on a storage connection). */
export interface ConnectionStorages {
  /**
   * The storage of `bucketName` on connection `id` as `version` (a digest of its stored row) describes it,
   * opened with `open` the first time. Another version retires the connection's clients first.
   */
  get(id: string, version: string, bucketName: string, open: () => Promise<ObjectStorage>): Promise<ObjectStorage>
  /** Retires the clients of a connection that is gone. */
  forget(id: string): void
  /** Closes every client now (shutdown). */
  close(): Promise<void>
}

/**
 * One client per connection and bucket, kept while the connection's stored row stays the same. A changed
 * connection (new endpoint, keys) or a deleted one retires its clients, each closed once the requests under
 * way on it are done.
 */
export function createConnectionStorages(): ConnectionStorages {
  const byConnection = new Map<string, { version: string; buckets: Map<string, Promise<Lease>> }>()
  const all = new Set<Promise<Lease>>()
  const retire = (buckets: Map<string, Promise<Lease>>) => {
    for (const leased of buckets.values())
      void leased.then(
        (l) => l.retire(),
        () => undefined,
      )
  }
  return {
    async get(id, version, bucketName, open) {
      let entry = byConnection.get(id)
      if (entry && entry.version !== version) {
        retire(entry.buckets)
        entry = undefined
      }
      if (!entry) {
        entry = { version, buckets: new Map() }
        byConnection.set(id, entry)
      }
      let leased = entry.buckets.get(bucketName)
      if (!leased) {
        const opening = open().then(lease)
        const buckets = entry.buckets
        buckets.set(bucketName, opening)
        all.add(opening)
        // A failed open (a refused address) is not kept: the next request tries again.
        opening.catch(() => {
          all.delete(opening)
          if (buckets.get(bucketName) === opening) buckets.delete(bucketName)
        })
        leased = opening
      }
      return (await leased).storage
    },
    forget(id) {
      const entry = byConnection.get(id)
      if (!entry) return
      byConnection.delete(id)
      retire(entry.buckets)
    },
    async close() {
      byConnection.clear()
      const leases = await Promise.allSettled([...all])
      all.clear()
      await Promise.all(leases.map((l) => (l.status === 'fulfilled' ? l.value.close() : undefined)))
    },
  }
}
