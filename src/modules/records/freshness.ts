import { createHash } from 'node:crypto'
import { createTtlCache } from '../../lib/cache/ttl-cache.js'
import type { WriteVersions } from '../../lib/cache/write-versions.js'
import type { Clock } from '../../lib/clock.js'
import type { Logger } from '../../lib/log.js'
import type { Collection } from '../collections/index.js'
import type { Opened } from './context.js'

/**
 * What lets a read skip work without ever answering stale (decision 025): each collection has a write
 * version that every records write moves after it commits and before it is answered (the pipeline's
 * publish, truncate). A page-mode total is cached under a key holding that version, so a write makes
 * every older total unreachable at once, on every instance when the versions live in Redis; an ETag is a
 * digest of the same version, the request and what the caller may see, so it changes with any of them.
 */
export interface Freshness {
  /** The collection's write version, read before the data it labels; null when it cannot be read (nothing cached, no ETag). */
  version(collection: Collection): Promise<string | null>
  /** Moves the write version of each collection (once each). A failure is logged, never thrown: the write committed. */
  bump(collections: readonly Collection[]): Promise<void>
  /** The page-mode total for this request at this version: cached, or counted by `load` and kept. */
  count(opened: Opened, version: string | null, request: unknown, load: () => Promise<number>): Promise<number>
  /** The weak ETag of an answer at this version, or null when the answer draws on other collections too. */
  etag(opened: Opened, version: string | null, request: unknown, options: { expand?: string }): string | null
}

// A missed bump (Redis unreachable while a write committed) can leave a cached total wrong; the TTL bounds it.
const countTtlMs = 60_000
const maxCounts = 10_000

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32)

/**
 * A fast 53-bit string hash (cyrb53) for ETags: a tag only has to change when its inputs do, and a
 * collision could at worst answer one client 304 (no body) for an answer it never held, so no
 * cryptographic digest is needed on the per-request path (sha256 there measured at about 10% of a GET by id's
 * server CPU). The count cache keeps sha256: a collision there would give one scope another's total.
 */
function quickHash(text: string): string {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
}

/** The key of a collection's write version: by id, so a collection dropped and made again starts afresh. */
export const versionKey = (collection: Collection) => `${collection.projectId}:${collection.id}`

export function createFreshness(deps: { versions: WriteVersions; clock: Clock; log: Logger }): Freshness {
  const counts = createTtlCache<number>({ maxEntries: maxCounts, ttlMs: countTtlMs, clock: deps.clock })
  /**
   * Everything about the caller that shapes what it sees: the rows its grants, preset, ownership and shares
   * reach (user ids and shared record ids are literals in that filter), the fields it may read, admin, and
   * the locale filters compare in. Two callers with the same scope see the same rows and may share a total.
   */
  function viewOf(opened: Opened): unknown[] {
    const { scope } = opened
    // Every definition change moves schemaVersion (stored, so the same on every instance): cheaper than a
    // digest of the definition, which cost about 10% of a GET by id when taken per request.
    return [opened.collection.schemaVersion, opened.collection.updatedAt, scope.rows, scope.fields, scope.admin, opened.locale, opened.compareLocale]
  }

  return {
    async version(collection) {
      try {
        return await deps.versions.current(versionKey(collection))
      } catch (err) {
        deps.log.warn({ err, collection: collection.name }, 'write version unreadable: counting without the cache')
        return null
      }
    },

    async bump(collections) {
      const keys = new Set(collections.map(versionKey))
      try {
        await Promise.all([...keys].map((key) => deps.versions.bump(key)))
      } catch (err) {
        deps.log.warn({ err, keys: [...keys] }, 'write version not moved: cached totals may lag until they expire')
      }
    },

    async count(opened, version, request, load) {
      if (version === null) return load()
      const key = `${versionKey(opened.collection)}|${version}|${digest(JSON.stringify([viewOf(opened), request]))}`
      return (await counts.getOrLoad(key, load)) ?? load()
    },

    etag(opened, version, request, options) {
      // Expanded relations and computed fields (lookup, rollup) come from other collections, whose writes
      // move other versions: such answers carry no ETag rather than one that could outlive them.
      if (version === null || (options.expand ?? '') !== '' || opened.shape.computed.length > 0) return null
      return `W/"${quickHash(JSON.stringify([versionKey(opened.collection), version, viewOf(opened), request]))}"`
    },
  }
}

/**
 * What an If-None-Match header asks of an answer with this ETag (weak comparison, RFC 9110 § 13.1.2):
 * `tag` when it lists the ETag, `any` for `*` (not modified if the resource is there at all), else `none`.
 */
export function ifNoneMatch(header: string | undefined, etag: string | null): 'tag' | 'any' | 'none' {
  if (header === undefined || etag === null) return 'none'
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  const wanted = opaque(etag)
  const tags = header.split(',').map((tag) => tag.trim())
  if (tags.some((tag) => opaque(tag) === wanted)) return 'tag'
  return tags.includes('*') ? 'any' : 'none'
}
