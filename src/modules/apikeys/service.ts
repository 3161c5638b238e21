import type { Kysely } from 'kysely'
import { createTtlCache } from '../../lib/cache/ttl-cache.js'
import type { Clock } from '../../lib/clock.js'
import { randomToken, sha256Hex } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { isSuperAdmin, requirePerson, type Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { AccessService } from '../access/index.js'
import { parseCapability } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import { createApiKeysStore, type ApiKeyRow } from './store.js'

export interface ApiKey {
  id: string
  label: string
  capabilities: string[]
  user_id: string | null
  created_at: number
  expires_at: number | null
  last_used_at: number | null
}

/** What a valid key resolves to; the auth module turns it into a Principal. */
export interface ResolvedKey {
  readonly id: string
  readonly projectId: string
  readonly userId: string | null
  /** The creator's current role (cached with the key, dropped when the creator changes). */
  readonly creatorRoleId: string | null
  readonly capabilities: readonly string[]
  readonly expiresAt: number | null
}

export interface ApiKeysDeps {
  systemDb: Kysely<any>
  clock: Clock
  access: AccessService
  audit: AuditService
  pubsub: PubSub
  /** The key creator's role while they may still act (exist, not banned), else null. */
  creatorRole: (userId: string) => Promise<string | null>
  /** Awaited after a key's database reads, before it is cached; tests hold a load there to race a revocation against it. */
  loadPace?: () => Promise<void>
}

type CachedKey = ResolvedKey & { userKey: string }

const prefix = 'sk-'
const channel = 'apikeys.revoked'
// last_used_at is written at most this often per key, not on every request.
const touchEverySeconds = 60

/** API keys: `sk-` + 32 random bytes, stored as SHA-256, shown once; capabilities bounded by the creator. */
export async function createApiKeysService(deps: ApiKeysDeps) {
  const store = createApiKeysStore(deps.systemDb)
  const cache = createTtlCache<CachedKey>({ maxEntries: 10_000, ttlMs: 5 * 60_000, clock: deps.clock })
  const lastTouched = new Map<string, number>()
  const unsubscribe = await deps.pubsub.subscribe(channel, (message) => drop(message))

  function drop(message: string): void {
    const [kind, value] = [message.slice(0, message.indexOf(':')), message.slice(message.indexOf(':') + 1)]
    if (kind === 'hash') cache.delete(value)
    if (kind === 'user') cache.deleteWhere((_, v) => v.userKey === value)
  }
  async function broadcast(message: string): Promise<void> {
    drop(message)
    await deps.pubsub.publish(channel, message, { awaitDelivery: true })
  }

  async function load(hash: string): Promise<CachedKey | null> {
    const row = await store.byHash(hash)
    if (!row) return null
    const creatorRoleId = row.user_id ? await deps.creatorRole(row.user_id) : null
    if (row.user_id && !creatorRoleId) return null
    await deps.loadPace?.()
    return {
      id: row.id,
      projectId: row.project_id,
      userId: row.user_id,
      creatorRoleId,
      capabilities: JSON.parse(row.capabilities) as string[],
      expiresAt: row.expires_at,
      userKey: row.user_id ?? '',
    }
  }

  function toApiKey(row: ApiKeyRow): ApiKey {
    return {
      id: row.id,
      label: row.label,
      capabilities: JSON.parse(row.capabilities) as string[],
      user_id: row.user_id,
      created_at: row.created_at,
      expires_at: row.expires_at,
      last_used_at: row.last_used_at,
    }
  }

  async function mayAdminister(actor: Principal): Promise<boolean> {
    return deps.access.hasAdminAccess(actor)
  }

  return {
    /**
     * Creates a key for the caller (a signed-in person), or a service key bound to no user (super_admin,
     * `service: true`). Every capability must be one the caller holds. Throws invalid_request, forbidden.
     */
    async create(
      actor: Principal,
      input: { label: string; capabilities: string[]; expires_at?: number | null; service?: boolean },
    ): Promise<ApiKey & { raw: string }> {
      assertSession(actor)
      if (input.service && !isSuperAdmin(actor))
        throw new AppError('forbidden', 'Only a super_admin may create a service key')
      const capabilities = [...new Set(input.capabilities)]
      // Well formed and naming a resource Plinth knows (400 naming the capability otherwise).
      capabilities.forEach(parseCapability)
      const now = deps.clock.seconds()
      if (input.expires_at != null && input.expires_at <= now)
        throw new AppError('invalid_request', 'expires_at must be in the future')
      const missing = await deps.access.missingPermissions(actor, capabilities)
      if (missing.length > 0) {
        throw new AppError('forbidden', `A key cannot hold permissions you lack: ${missing.join(', ')}`, { missing })
      }
      const raw = `${prefix}${randomToken(32)}`
      const row: ApiKeyRow = {
        id: newId(),
        // A key bound to a user belongs to the user's own project, as the user's sessions do: its role is
        // resolved there, and a super_admin's key reaches other projects with X-Project-Id. A service key
        // has no user and belongs to the project it was created in.
        project_id: input.service ? actor.projectId : actor.homeProjectId,
        user_id: input.service ? null : actor.userId,
        label: input.label,
        capabilities: JSON.stringify(capabilities),
        key_hash: sha256Hex(raw),
        created_at: now,
        expires_at: input.expires_at ?? null,
        last_used_at: null,
      }
      await store.insert(row)
      await deps.audit.record({
        projectId: row.project_id,
        action: 'apikey.created',
        actor,
        target: { type: 'api_key', id: row.id },
        details: { label: row.label, capabilities, service: row.user_id === null, expires_at: row.expires_at },
      })
      return { ...toApiKey(row), raw }
    },

    /** The project's keys for an administrator, else the caller's own. Never the raw key. Throws forbidden for a key. */
    async list(actor: Principal): Promise<ApiKey[]> {
      assertSession(actor)
      const all = await mayAdminister(actor)
      return (await store.list(actor.projectId, all ? null : actor.userId)).map(toApiKey)
    },

    /** Revokes a key at once, on every instance. Its creator or an administrator may. Throws not_found. */
    async revoke(actor: Principal, id: string): Promise<void> {
      assertSession(actor)
      const row = await store.byId(id)
      const visible =
        row && row.project_id === actor.projectId && (row.user_id === actor.userId || (await mayAdminister(actor)))
      if (!row || !visible) throw new AppError('not_found', 'API key not found')
      await store.delete(id)
      await broadcast(`hash:${row.key_hash}`)
      await deps.audit.record({
        projectId: row.project_id,
        action: 'apikey.revoked',
        actor,
        target: { type: 'api_key', id },
        details: { label: row.label },
      })
    },

    /** The key behind a raw `sk-` value, or null when unknown, revoked, expired or its creator is gone or banned. */
    async resolve(raw: string): Promise<ResolvedKey | null> {
      const hash = sha256Hex(raw)
      const key = await cache.getOrLoad(hash, () => load(hash))
      if (!key) return null
      const now = deps.clock.seconds()
      if (key.expiresAt !== null && key.expiresAt <= now) return null
      if ((lastTouched.get(key.id) ?? 0) + touchEverySeconds <= now) {
        lastTouched.set(key.id, now)
        await store.touch(key.id, now)
      }
      return key
    },

    /**
     * The key with this id as `resolve` would give it (its creator's current role), or null when unknown,
     * revoked, expired or its creator is gone or banned: a flow published through a key runs within it (decision 045).
     */
    async byId(id: string): Promise<ResolvedKey | null> {
      const row = await store.byId(id)
      if (!row || (row.expires_at !== null && row.expires_at <= deps.clock.seconds())) return null
      const creatorRoleId = row.user_id ? await deps.creatorRole(row.user_id) : null
      if (row.user_id && !creatorRoleId) return null
      return {
        id: row.id,
        projectId: row.project_id,
        userId: row.user_id,
        creatorRoleId,
        capabilities: JSON.parse(row.capabilities) as string[],
        expiresAt: row.expires_at,
      }
    },

    /** Drops cached keys of a user (role change, ban, deletion) on every instance. */
    forgetUser: (userId: string): Promise<void> => broadcast(`user:${userId}`),

    async close(): Promise<void> {
      await unsubscribe()
    },
  }
}

export type ApiKeysService = Awaited<ReturnType<typeof createApiKeysService>>

/** Keys are managed by people: a key may neither mint, list nor revoke keys, nor may system work. Throws unauthorized, forbidden. */
function assertSession(actor: Principal): void {
  if (actor.kind === 'api_key')
    throw new AppError('forbidden', 'API keys are managed from a signed-in session, not with a key')
  requirePerson(actor, 'Managing API keys')
}
