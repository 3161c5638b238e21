import { createTtlCache } from '../../lib/cache/ttl-cache.js'
import type { Clock } from '../../lib/clock.js'
import { randomToken, sha256Hex } from '../../lib/crypto/index.js'
import { newId } from '../../lib/ids.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { UsersService } from '../users/index.js'
import type { AuthStore } from './store.js'

/** What a live session token resolves to; the role is looked up per request, so a rename shows at once. */
export interface ActiveSession {
  readonly id: string
  readonly userId: string
  readonly projectId: string
  readonly roleId: string
  readonly expiresAt: number
  // The profile get-session answers with, so it needs no query; dropped when the user changes.
  readonly email: string | null
  readonly name: string
}

const channel = 'auth.sessions'

export interface SessionsDeps {
  store: AuthStore
  users: UsersService
  clock: Clock
  pubsub: PubSub
  ttlSeconds: number
  /** Awaited after a resolution's database reads, before it is cached; tests hold a load there to race a sign-out against it. */
  loadPace?: () => Promise<void>
}

/**
 * Sessions: opaque random tokens of which only the SHA-256 is stored. Resolution is cached for 5 minutes
 * keyed by that hash; sign-out and user changes drop the cached entries on every instance at once, and
 * one that lands while a resolution is reading keeps that resolution out of the cache.
 */
export async function createSessions(deps: SessionsDeps) {
  const { store, clock } = deps
  const cache = createTtlCache<ActiveSession>({ maxEntries: 50_000, ttlMs: 5 * 60_000, clock })
  const unsubscribe = await deps.pubsub.subscribe(channel, (message) => drop(message))

  function drop(message: string): void {
    const split = message.indexOf(':')
    const kind = message.slice(0, split)
    const value = message.slice(split + 1)
    if (kind === 'hash') cache.delete(value)
    else if (kind === 'user') cache.deleteWhere((_, s) => s.userId === value)
  }
  async function broadcast(message: string): Promise<void> {
    drop(message)
    await deps.pubsub.publish(channel, message, { awaitDelivery: true })
  }

  async function load(hash: string): Promise<ActiveSession | null> {
    const row = await store.sessionByHash(hash)
    // An expired row waiting for the sweep is never cached, so no request drops it again (a delete is an invalidation).
    if (!row || row.expires_at <= clock.seconds()) return null
    const user = await deps.users.findRow(row.user_id)
    if (!user || user.banned) return null
    await deps.loadPace?.()
    return {
      id: row.id,
      userId: user.id,
      projectId: user.project_id,
      roleId: user.role_id,
      expiresAt: row.expires_at,
      email: user.email,
      name: user.name,
    }
  }

  return {
    /** Opens a session for the user and returns the raw token (never stored) and its expiry. */
    async create(userId: string): Promise<{ token: string; id: string; expiresAt: number }> {
      const token = randomToken(32)
      const now = clock.seconds()
      const row = {
        id: newId(),
        token_hash: sha256Hex(token),
        user_id: userId,
        created_at: now,
        expires_at: now + deps.ttlSeconds,
      }
      await store.insertSession(row)
      return { token, id: row.id, expiresAt: row.expires_at }
    },

    /** The live session behind a raw token, or null (unknown, expired, signed out, user banned or gone). */
    async resolve(token: string): Promise<ActiveSession | null> {
      const hash = sha256Hex(token)
      // A hit is answered without getOrLoad's extra promise (a GET by id resolves its session every time).
      const session = cache.get(hash) ?? (await cache.getOrLoad(hash, () => load(hash)))
      if (!session) return null
      if (session.expiresAt <= clock.seconds()) {
        cache.delete(hash)
        return null
      }
      return session
    },

    /** Ends one session (sign-out). */
    async revoke(token: string): Promise<void> {
      const hash = sha256Hex(token)
      await store.deleteSession(hash)
      await broadcast(`hash:${hash}`)
    },

    /** Ends every session of a user (ban, password change, deletion). */
    async revokeUser(userId: string): Promise<void> {
      await store.deleteSessionsOf(userId)
      await broadcast(`user:${userId}`)
    },

    /** Drops cached sessions of a user without ending them (a role or profile change). */
    refreshUser: (userId: string): Promise<void> => broadcast(`user:${userId}`),

    async close(): Promise<void> {
      await unsubscribe()
    },
  }
}

export type Sessions = Awaited<ReturnType<typeof createSessions>>
