import { createHash, hash } from 'node:crypto'
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
const maxTags = 10_000

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32)

/** The key of a collection's write version: by id, so a collection dropped and made again starts afresh. */
export const versionKey = (collection: Collection) => `${collection.projectId}:${collection.id}`

export function createFreshness(deps: { versions: WriteVersions; clock: Clock; log: Logger }): Freshness {
  const counts = createTtlCache<number>({ maxEntries: maxCounts, ttlMs: countTtlMs, clock: deps.clock })
  /** The last tag of each (collection, view, request), with the version it was made at. */
  const tags = new Map<string, { version: string; tag: string }>()
  /**
   * Everything about the caller that shapes what it sees: the rows its grants, preset, ownership and shares
   * reach (user ids and shared record ids are literals in that filter), the fields it may read, admin, and
   * the locale filters compare in. Two callers with the same scope see the same rows and may share a total.
   * Joined by hand rather than as one JSON array (which cost as much as hashing it, per request): the parts
   * that may hold any character are JSON, which never holds a raw line break, so the breaks between parts
   * cannot be forged; the locales are checked tags.
   */
  function viewOf(opened: Opened): string {
    const { collection, scope } = opened
    // Every definition change moves schemaVersion (stored, so the same on every instance): cheaper than a
    // digest of the definition, which cost about 10% of a GET by id when taken per request.
    const rows = scope.rows === null ? '' : JSON.stringify(scope.rows)
    const fields = scope.fields === null ? '' : JSON.stringify(scope.fields)
    // The copy read (r2_sql: a working copy or a published version, decision 036) holds other rows at one write version.
    return `${collection.schemaVersion}\n${collection.updatedAt}\n${rows}\n${fields}\n${scope.admin}\n${opened.locale}\n${opened.compareLocale}\n${opened.handle.copy ?? ''}`
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
      const key = `${versionKey(opened.collection)}|${version}|${digest(`${viewOf(opened)}\n${JSON.stringify(request)}`)}`
      return (await counts.getOrLoad(key, load)) ?? load()
    },

    etag(opened, version, request, options) {
      // Expanded relations and computed fields (lookup, rollup) come from other collections, whose writes
      // move other versions: such answers carry no ETag rather than one that could outlive them.
      if (version === null || (options.expand ?? '') !== '' || opened.shape.computed.length > 0) return null
      // The same request by the same view at the same version has the same tag: it is kept, so a read
      // repeated between writes hashes nothing (the hash was about 6 of GET by id's 13 µs of ETag cost).
      const asked = `${versionKey(opened.collection)}\n${viewOf(opened)}\n${JSON.stringify(request)}`
      const known = tags.get(asked)
      if (known?.version === version) return known.tag
      // One-shot SHA-1 (crypto.hash, no Hash object) of the joined text; 160 bits put an accidental collision
      // (a 304 for an answer the client never held) out of reach. Hashed rather than shown, so a tag does not
      // tell a reader how often the collection is written (rows it cannot see included).
      const tag = `W/"${hash('sha1', `${version}\n${asked}`, 'base64url')}"`
      if (tags.size >= maxTags) tags.clear()
      tags.set(asked, { version, tag })
      return tag
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
