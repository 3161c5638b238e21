import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import type pg from 'pg'
import { AppError } from '../errors.js'
import type { DbHandle, DbKind } from './handle.js'
import { createPgPool, ensureSchema, openPostgres } from './postgres.js'
import { openSqlite } from './sqlite.js'

/** The binding every project has: its own database (an SQLite file, or a PostgreSQL schema). */
export const MAIN_BINDING = 'main'

/**
 * A database the registry creates and owns for one collection (storageType durable_object): its own
 * SQLite file, or its own PostgreSQL schema. Its id, `collection_<collectionId>`, is what the collection
 * records as its database; registered bindings have bare hex ids, so the two never meet.
 */
const ownPrefix = 'collection_'

/** The id of a collection's own database. */
export function ownDatabaseId(collectionId: string): string {
  return `${ownPrefix}${collectionId}`
}

/** Whether an id names a collection's own database rather than a registered binding. */
export function isOwnDatabaseId(id: string): boolean {
  return id.startsWith(ownPrefix)
}

/** Where another registered database lives. Persisted by the databases module, resolved here. */
export type BindingDescriptor =
  | { readonly id: string; readonly kind: 'sqlite' }
  | {
      readonly id: string
      readonly kind: 'postgres'
      readonly url: string
      readonly schema?: string
      /** May connect to loopback, private and link-local addresses; when false every connection is guarded (lib/outbound). */
      readonly privateNetwork: boolean
    }

/** Looks up a registered binding of a project; null when there is none. */
export type ResolveBinding = (projectId: string, bindingId: string) => Promise<BindingDescriptor | null>

export interface DatabaseRegistryOptions {
  readonly kind: DbKind
  readonly dataDir: string
  /** Required when kind is postgres. */
  readonly postgresUrl?: string
  /**
   * Builds the lookup of registered bindings from the system database (where they are registered), once
   * it is open; without it a project has only its own database.
   */
  readonly resolveBinding?: (system: DbHandle) => ResolveBinding
  readonly onPoolError?: (err: Error) => void
}

export interface DatabaseRegistry {
  readonly kind: DbKind
  /** The system database: projects, users, sessions, the collections registry… */
  readonly system: DbHandle
  /**
   * The handle for (project, binding); opens, and on first use creates, the database (a collection's own
   * database it only opens: `createOwn` makes it). Throws not_found.
   */
  get(projectId: string, bindingId?: string): Promise<DbHandle>
  /**
   * Creates a collection's own database (`ownDatabaseId`) and answers its handle; `get` only opens one
   * that exists (not_found otherwise), so a stale lookup never brings a dropped one back empty.
   */
  createOwn(projectId: string, databaseId: string): Promise<DbHandle>
  /** Closes a collection's own database and removes it: the file (with -wal, -shm) or the schema and all in it. Idempotent. */
  dropOwn(projectId: string, databaseId: string): Promise<void>
  /** Forgets an open handle (after a binding is deleted) and closes what only it used. */
  release(projectId: string, bindingId?: string): Promise<void>
  close(): Promise<void>
}

const safeId = /^[a-z0-9_]{1,64}$/
const systemSchema = 'plinth'

/** Opens the system database; project databases open lazily on first `get`. */
export async function createDatabaseRegistry(options: DatabaseRegistryOptions): Promise<DatabaseRegistry> {
  const onPoolError = options.onPoolError ?? (() => {})
  const roots: Kysely<any>[] = []
  const pools = new Map<string, pg.Pool>()
  const open = new Map<string, Promise<{ handle: DbHandle; root: Kysely<any> | null }>>()

  let system: DbHandle
  let sharedPg: Kysely<any> | null = null
  if (options.kind === 'postgres') {
    if (!options.postgresUrl) throw new Error('postgresUrl is required for a PostgreSQL registry')
    sharedPg = openPostgres(poolFor(options.postgresUrl))
    roots.push(sharedPg)
    await ensureSchema(sharedPg, systemSchema)
    system = { kind: 'postgres', db: sharedPg.withSchema(systemSchema), schema: systemSchema }
  } else {
    const root = openSqlite(join(options.dataDir, 'system.db'))
    roots.push(root)
    system = { kind: 'sqlite', db: root, schema: null }
  }
  const resolveBinding = options.resolveBinding?.(system)

  function poolFor(url: string, guarded = false): pg.Pool {
    // A guarded pool is never shared with an unguarded one for the same URL.
    const key = `${guarded ? 'guarded' : 'open'} ${url}`
    let pool = pools.get(key)
    if (!pool) {
      pool = createPgPool(url, onPoolError, { guarded })
      pools.set(key, pool)
    }
    return pool
  }

  async function openMain(projectId: string): Promise<{ handle: DbHandle; root: Kysely<any> | null }> {
    if (sharedPg) {
      const schema = `project_${projectId}`
      await ensureSchema(sharedPg, schema)
      return { handle: { kind: 'postgres', db: sharedPg.withSchema(schema), schema }, root: null }
    }
    const root = openSqlite(join(options.dataDir, 'projects', `${projectId}.db`))
    return { handle: { kind: 'sqlite', db: root, schema: null }, root }
  }

  function ownFile(projectId: string, databaseId: string): string {
    return join(options.dataDir, 'projects', projectId, 'collections', `${databaseId.slice(ownPrefix.length)}.db`)
  }

  async function openOwn(
    projectId: string,
    databaseId: string,
    create: boolean,
  ): Promise<{ handle: DbHandle; root: Kysely<any> | null }> {
    const missing = () => new AppError('not_found', 'Database binding not found', { databaseId })
    if (sharedPg) {
      // The schema name is the id itself (`collection_` and 32 hex digits, within PostgreSQL's 63).
      if (create) await ensureSchema(sharedPg, databaseId)
      else {
        const found = await sql`select 1 from pg_namespace where nspname = ${databaseId}`.execute(sharedPg)
        if (found.rows.length === 0) throw missing()
      }
      return { handle: { kind: 'postgres', db: sharedPg.withSchema(databaseId), schema: databaseId }, root: null }
    }
    const file = ownFile(projectId, databaseId)
    if (!create && !existsSync(file)) throw missing()
    const root = openSqlite(file)
    return { handle: { kind: 'sqlite', db: root, schema: null }, root }
  }

  function checkIds(projectId: string, bindingId: string): void {
    if (!safeId.test(projectId) || !safeId.test(bindingId)) {
      throw new AppError('not_found', 'Database binding not found', { databaseId: bindingId })
    }
  }

  function checkOwn(projectId: string, databaseId: string): void {
    checkIds(projectId, databaseId)
    if (!isOwnDatabaseId(databaseId)) throw new AppError('not_found', 'Database binding not found', { databaseId })
  }

  function remember(key: string, entry: Promise<{ handle: DbHandle; root: Kysely<any> | null }>) {
    open.set(key, entry)
    entry.catch(() => {
      if (open.get(key) === entry) open.delete(key)
    })
    return entry
  }

  async function openBinding(
    projectId: string,
    bindingId: string,
  ): Promise<{ handle: DbHandle; root: Kysely<any> | null }> {
    const descriptor = await resolveBinding?.(projectId, bindingId)
    if (!descriptor) throw new AppError('not_found', 'Database binding not found', { databaseId: bindingId })
    if (descriptor.kind === 'sqlite') {
      const root = openSqlite(join(options.dataDir, 'databases', `${bindingId}.db`))
      return { handle: { kind: 'sqlite', db: root, schema: null }, root }
    }
    // Its own pool: a binding's server is not the system server. The pool closes with the registry.
    const root = openPostgres(poolFor(descriptor.url, !descriptor.privateNetwork))
    const schema = descriptor.schema ?? 'public'
    await ensureSchema(root, schema)
    return { handle: { kind: 'postgres', db: root.withSchema(schema), schema }, root: null }
  }

  return {
    kind: options.kind,
    system,
    async get(projectId, bindingId = MAIN_BINDING) {
      checkIds(projectId, bindingId)
      const key = `${projectId}/${bindingId}`
      let entry = open.get(key)
      if (!entry) {
        entry = remember(
          key,
          bindingId === MAIN_BINDING
            ? openMain(projectId)
            : isOwnDatabaseId(bindingId)
              ? openOwn(projectId, bindingId, false)
              : openBinding(projectId, bindingId),
        )
      }
      return (await entry).handle
    },
    async createOwn(projectId, databaseId) {
      checkOwn(projectId, databaseId)
      const key = `${projectId}/${databaseId}`
      const entry = open.get(key) ?? remember(key, openOwn(projectId, databaseId, true))
      return (await entry).handle
    },
    async dropOwn(projectId, databaseId) {
      checkOwn(projectId, databaseId)
      const key = `${projectId}/${databaseId}`
      const entry = open.get(key)
      open.delete(key)
      const opened = await entry?.catch(() => null)
      if (sharedPg) {
        await sql`drop schema if exists ${sql.id(databaseId)} cascade`.execute(sharedPg)
        return
      }
      // Closing the last connection checkpoints the WAL; the three files then go together.
      await opened?.root?.destroy()
      const file = ownFile(projectId, databaseId)
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
    },
    async release(projectId, bindingId = MAIN_BINDING) {
      const key = `${projectId}/${bindingId}`
      const entry = open.get(key)
      open.delete(key)
      const opened = await entry?.catch(() => null)
      await opened?.root?.destroy()
    },
    async close() {
      const opened = await Promise.allSettled(open.values())
      open.clear()
      for (const r of opened) if (r.status === 'fulfilled' && r.value.root) await r.value.root.destroy()
      // Destroying the shared PostgreSQL Kysely ends its pool; binding pools end here too.
      for (const root of roots) await root.destroy()
      for (const pool of pools.values()) if (!pool.ended) await pool.end().catch(() => {})
      pools.clear()
    },
  }
}
