import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { SecretBox } from '../../lib/crypto/index.js'
import type { DatabaseRegistry } from '../../lib/db/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { isBlockedAddressError } from '../../lib/outbound/index.js'
import { isSuperAdmin, type Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import { createDatabasesStore, type BindingRow } from './store.js'

export interface DatabaseBinding {
  id: string
  name: string
  kind: 'sqlite' | 'postgres'
  /** The server and database, without credentials (postgres only). */
  location: string | null
  createdAt: number
}

/**
 * Database bindings (addendum §4): databases besides a project's own where `remote` collections live.
 * A PostgreSQL binding's URL may hold a password, so it is sealed at rest and never returned.
 */
export interface DatabaseDeletion {
  success: true
  /** What was done and what was left, one line each. */
  cleanupLog: string[]
  /** True when something was left for a person to remove (tables in a database Plinth does not own). */
  manualCleanupRequired: boolean
}

export interface DatabasesDeps {
  systemDb: Kysely<any>
  clock: Clock
  box: SecretBox
  audit: AuditService
  registry: DatabaseRegistry
  /** Where SQLite bindings live: DATA_DIR/databases/<id>.db (as the registry opens them). */
  dataDir: string
  collections: Pick<CollectionsService, 'list' | 'forget'>
  access: Pick<AccessService, 'dropGrantsOn' | 'authorize'>
  log: Logger
}

/** The one answer to any failure to open a new binding: it must not tell a closed port from an open one. */
const unopenable = () =>
  new AppError(
    'invalid_request',
    'The database could not be opened; check the URL, the credentials and that the server is reachable from this server',
  )

export function createDatabasesService(deps: DatabasesDeps) {
  const store = createDatabasesStore(deps.systemDb)

  function toBinding(row: BindingRow): DatabaseBinding {
    return {
      id: row.id,
      name: row.name,
      kind: row.kind as DatabaseBinding['kind'],
      location: row.url_sealed ? withoutCredentials(deps.box.open(row.url_sealed)) : null,
      createdAt: row.created_at,
    }
  }

  return {
    /** The project's registered bindings (its own database, `main`, is implicit). */
    async list(actor: Principal): Promise<DatabaseBinding[]> {
      await deps.access.authorize(actor, 'system/databases:read')
      const projectId = actor.projectId
      return (await store.list(projectId)).map(toBinding)
    },

    /** One binding of the project. Throws not_found. */
    async get(actor: Principal, id: string): Promise<DatabaseBinding> {
      await deps.access.authorize(actor, 'system/databases:read')
      const projectId = actor.projectId
      const row = await store.byId(id)
      if (!row || row.project_id !== projectId) throw new AppError('not_found', 'Database not found')
      return toBinding(row)
    },

    /**
     * Registers a database and proves it can be opened before answering. A PostgreSQL server that is, or
     * resolves to, a loopback, private or link-local address needs a super_admin or ALLOW_PRIVATE_NETWORK
     * (forbidden, and nothing is contacted); the binding remembers that a super_admin vouched for it, and
     * every later connection of one that may not reach such addresses is checked on its socket. Any other
     * failure to open answers the same invalid_request whatever the reason (closed port, not PostgreSQL,
     * credentials, unknown database, DNS, timeout); the reason goes to the log without the password.
     * Throws invalid_request (shape, could not be opened), forbidden (private address), already_exists (name).
     */
    async create(
      actor: Principal,
      input: { name: string; kind: 'sqlite' | 'postgres'; url?: string },
    ): Promise<DatabaseBinding> {
      await deps.access.authorize(actor, 'system/databases:manage')
      const projectId = actor.projectId
      if (input.kind === 'postgres' && !input.url)
        throw new AppError('invalid_request', 'A postgres database needs a url (postgres://…)')
      if (input.kind === 'sqlite' && input.url)
        throw new AppError('invalid_request', 'A sqlite database is a file Plinth keeps; send no url')
      const row: BindingRow = {
        id: newId(),
        project_id: projectId,
        name: input.name,
        kind: input.kind,
        url_sealed: input.url ? deps.box.seal(input.url) : null,
        private_network: isSuperAdmin(actor),
        created_at: deps.clock.seconds(),
      }
      try {
        await store.insert(row)
      } catch (err) {
        if (isAppError(err) && err.code === 'already_exists')
          throw new AppError('already_exists', `A database named "${input.name}" already exists`, { fields: ['name'] })
        throw err
      }
      try {
        await deps.registry.get(projectId, row.id)
      } catch (err) {
        await store.delete(row.id)
        await deps.registry.release(projectId, row.id)
        if (isBlockedAddressError(err)) {
          throw new AppError(
            'forbidden',
            'The database server is on a loopback, private or link-local address; only a super_admin may register it (or the server runs with ALLOW_PRIVATE_NETWORK)',
            {
              fields: ['url'],
            },
          )
        }
        deps.log.warn(
          {
            databaseName: row.name,
            location: withoutCredentials(input.url ?? ''),
            cause: failureOf(err, input.url ?? ''),
          },
          'database binding could not be opened',
        )
        throw unopenable()
      }
      await deps.audit.record({
        projectId,
        action: 'database.created',
        actor,
        target: { type: 'database', id: row.id },
        details: { name: row.name, kind: row.kind },
      })
      return toBinding(row)
    },

    /**
     * Unregisters a database. While collections are attached it is refused (409 conflict, stating how
     * many) unless `cascade`: then each attached collection leaves the registry with what derives from it
     * (grants naming it, shares of its records, cached metadata). A SQLite binding is Plinth's own file
     * and is deleted with its tables; tables in a PostgreSQL database are left where they are (Plinth
     * does not drop tables in a database it does not own), listed in the log, and flagged as manual
     * cleanup. Throws not_found, conflict (attached collections without cascade; a relation from a
     * collection elsewhere into one of them).
     */
    async delete(actor: Principal, id: string, cascade: boolean): Promise<DatabaseDeletion> {
      await deps.access.authorize(actor, 'system/databases:manage')
      const projectId = actor.projectId
      const row = await store.byId(id)
      if (!row || row.project_id !== projectId) throw new AppError('not_found', 'Database not found')
      const binding = toBinding(row)
      const attached = (await deps.collections.list(projectId)).filter((c) => c.databaseId === id).map((c) => c.name)
      if (attached.length > 0 && !cascade) {
        throw new AppError(
          'conflict',
          `${attached.length} collection${attached.length === 1 ? ' is' : 's are'} attached to database ${row.name} (${attached.join(', ')}); delete them first or pass cascade=true`,
          { count: attached.length, collections: attached },
        )
      }
      const cleanupLog: string[] = []
      let manualCleanupRequired = false
      if (attached.length > 0) {
        await deps.collections.forget(actor, projectId, attached)
        for (const name of attached) {
          const grants = await deps.access.dropGrantsOn(projectId, `collections/${name}`)
          cleanupLog.push(
            `Removed collection ${name} from the registry, with ${grants} grant${grants === 1 ? '' : 's'} naming it and the shares of its records`,
          )
        }
      }
      await store.delete(id)
      await deps.registry.release(projectId, id)
      cleanupLog.push(`Closed the connection to database ${row.name}`)
      if (row.kind === 'sqlite') {
        const file = join(deps.dataDir, 'databases', `${id}.db`)
        try {
          for (const suffix of ['', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true })
          cleanupLog.push(
            `Deleted the SQLite file of database ${row.name}${attached.length > 0 ? ` with its tables (${attached.join(', ')})` : ''}`,
          )
        } catch {
          manualCleanupRequired = true
          cleanupLog.push(
            `Could not delete the SQLite file of database ${row.name} (databases/${id}.db in the data directory); delete it by hand`,
          )
        }
      } else {
        for (const name of attached) {
          manualCleanupRequired = true
          cleanupLog.push(
            `Left table ${name} in ${binding.location ?? row.name}: Plinth does not drop tables in a database it does not own; drop it there if it is no longer needed`,
          )
        }
      }
      await deps.audit.record({
        projectId,
        action: 'database.deleted',
        actor,
        target: { type: 'database', id },
        details: { name: row.name, kind: row.kind, cascade, collections: attached },
      })
      return { success: true, cleanupLog, manualCleanupRequired }
    },
  }
}

export type DatabasesService = ReturnType<typeof createDatabasesService>

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return 'postgres://'
  }
}

/** The driver's code and message behind a failure to open, for the log; the URL's password is cut out. */
function failureOf(err: unknown, url: string): { code: string | null; message: string } {
  let e = err
  while (isAppError(e) && e.cause !== undefined) e = e.cause
  const { code, message } = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; message?: unknown }
  let text = typeof message === 'string' ? message : String(e)
  let password = ''
  try {
    password = new URL(url).password
  } catch {
    // Not a URL: the route only lets postgres:// URLs through, so there is no password to find.
  }
  for (const secret of new Set([password, safeDecode(password)])) if (secret) text = text.split(secret).join('***')
  return { code: typeof code === 'string' ? code : null, message: text.slice(0, 500) }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
