import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, testDatabaseUrl } from '../../../test/support/postgres.js'
import { dialects } from '../../../test/support/dialects.js'
import type { DbKind } from './handle.js'
import { sql } from 'kysely'
import { createDatabaseRegistry, ownDatabaseId, type BindingDescriptor, type DatabaseRegistry } from './registry.js'

const projectA = 'a'.repeat(32)
const projectB = 'b'.repeat(32)

describe.each(dialects())('database registry on %s', (kind: DbKind) => {
  let registry: DatabaseRegistry | undefined
  let cleanup: (() => Promise<void>) | undefined
  afterEach(async () => {
    await registry?.close()
    await cleanup?.()
    registry = undefined
  })

  async function open(bindings: Record<string, BindingDescriptor> = {}) {
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-registry-'))
    let postgresUrl: string | undefined
    let drop = async () => {}
    if (kind === 'postgres') {
      const database = await createTestDatabase(testDatabaseUrl()!)
      postgresUrl = database.url
      drop = database.drop
    }
    cleanup = async () => {
      await drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
    registry = await createDatabaseRegistry({
      kind,
      dataDir,
      postgresUrl,
      resolveBinding: () => async (projectId, id) => (projectId === projectA ? (bindings[id] ?? null) : null),
    })
    return { registry, dataDir }
  }

  it('keeps each project in its own database', async () => {
    const { registry, dataDir } = await open()
    const a = await registry.get(projectA)
    const b = await registry.get(projectB)
    await a.db.schema.createTable('notes').addColumn('id', 'text').execute()
    await a.db.insertInto('notes').values({ id: 'only-in-a' }).execute()
    await expect(b.db.selectFrom('notes').selectAll().execute()).rejects.toMatchObject({ code: 'internal' })
    await b.db.schema.createTable('notes').addColumn('id', 'text').execute()
    expect(await b.db.selectFrom('notes').selectAll().execute()).toEqual([])
    expect(await a.db.selectFrom('notes').selectAll().execute()).toEqual([{ id: 'only-in-a' }])
    if (kind === 'sqlite') expect(existsSync(join(dataDir, 'projects', `${projectA}.db`))).toBe(true)
  })

  it('returns the same handle for the same (project, binding)', async () => {
    const { registry } = await open()
    const [x, y] = await Promise.all([registry.get(projectA), registry.get(projectA, 'main')])
    expect(x).toBe(y)
  })

  it('keeps system tables apart from project tables', async () => {
    const { registry } = await open()
    await registry.system.db.schema.createTable('sys_only').addColumn('id', 'text').execute()
    const project = await registry.get(projectA)
    await expect(project.db.selectFrom('sys_only').selectAll().execute()).rejects.toMatchObject({ code: 'internal' })
  })

  it('opens a registered sqlite binding of the project', async () => {
    const { registry, dataDir } = await open({ archive: { id: 'archive', kind: 'sqlite' } })
    const handle = await registry.get(projectA, 'archive')
    expect(handle.kind).toBe('sqlite')
    await handle.db.schema.createTable('t').addColumn('id', 'text').execute()
    expect(existsSync(join(dataDir, 'databases', 'archive.db'))).toBe(true)
    const main = await registry.get(projectA)
    await expect(main.db.selectFrom('t').selectAll().execute()).rejects.toMatchObject({ code: 'internal' })
  })

  it("refuses an unknown binding, another project's binding and unsafe ids with not_found", async () => {
    const { registry } = await open({ archive: { id: 'archive', kind: 'sqlite' } })
    await expect(registry.get(projectA, 'nope')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get(projectB, 'archive')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get('../../etc')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get(projectA, 'x"; drop schema plinth;--')).rejects.toMatchObject({ code: 'not_found' })
  })

  it("a collection's own database: made by createOwn only, opened by get, removed whole by dropOwn", async () => {
    const { registry, dataDir } = await open()
    const id = ownDatabaseId('c'.repeat(32))
    const exists = async () =>
      kind === 'sqlite'
        ? existsSync(join(dataDir, 'projects', projectA, 'collections', `${'c'.repeat(32)}.db`))
        : (await sql`select 1 from pg_namespace where nspname = ${id}`.execute(registry.system.db)).rows.length > 0
    // get never makes one: a stale lookup after a drop must not bring it back empty.
    await expect(registry.get(projectA, id)).rejects.toMatchObject({ code: 'not_found' })
    expect(await exists()).toBe(false)
    const made = await registry.createOwn(projectA, id)
    expect(made.schema).toBe(kind === 'postgres' ? id : null)
    await made.db.schema.createTable('notes').addColumn('id', 'text').execute()
    await made.db.insertInto('notes').values({ id: 'kept' }).execute()
    expect(await exists()).toBe(true)
    expect(await registry.get(projectA, id)).toBe(made)
    // Apart from the project's own database.
    await expect((await registry.get(projectA)).db.selectFrom('notes').selectAll().execute()).rejects.toMatchObject({
      code: 'internal',
    })
    // Only its own project reaches the file (on PostgreSQL only the collection's databaseId ever asks).
    if (kind === 'sqlite') await expect(registry.get(projectB, id)).rejects.toMatchObject({ code: 'not_found' })
    // createOwn takes only own-database ids, never a binding's or the project's.
    await expect(registry.createOwn(projectA, 'main')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.createOwn(projectA, 'collection_../x')).rejects.toMatchObject({ code: 'not_found' })
    await registry.dropOwn(projectA, id)
    expect(await exists()).toBe(false)
    if (kind === 'sqlite') expect(readdirSync(join(dataDir, 'projects', projectA, 'collections'))).toEqual([])
    await expect(registry.get(projectA, id)).rejects.toMatchObject({ code: 'not_found' })
    await registry.dropOwn(projectA, id) // idempotent
  })

  it('a reopened registry opens an own database that exists, with its data', async () => {
    const { registry: first, dataDir } = await open()
    const id = ownDatabaseId('d'.repeat(32))
    const made = await first.createOwn(projectA, id)
    await made.db.schema.createTable('notes').addColumn('id', 'text').execute()
    await made.db.insertInto('notes').values({ id: 'kept' }).execute()
    await first.close()
    if (kind === 'postgres') return // the same database needs the same URL; the API restart test covers it
    registry = await createDatabaseRegistry({ kind, dataDir })
    const again = await registry.get(projectA, id)
    expect(await again.db.selectFrom('notes').selectAll().execute()).toEqual([{ id: 'kept' }])
  })
})

describe.runIf(testDatabaseUrl())('a registered postgres binding', () => {
  it('opens a schema on another server URL', async () => {
    const external = await createTestDatabase(testDatabaseUrl()!)
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-registry-'))
    const registry = await createDatabaseRegistry({
      kind: 'sqlite',
      dataDir,
      resolveBinding: () => async () => ({
        id: 'warehouse',
        kind: 'postgres',
        url: external.url,
        schema: 'warehouse',
        privateNetwork: true,
      }),
    })
    try {
      const handle = await registry.get(projectA, 'warehouse')
      expect(handle.kind).toBe('postgres')
      await handle.db.schema.createTable('facts').addColumn('id', 'text').execute()
      await handle.db.insertInto('facts').values({ id: 'f1' }).execute()
      expect(await handle.db.selectFrom('facts').selectAll().execute()).toEqual([{ id: 'f1' }])
    } finally {
      await registry.close()
      await external.drop()
    }
  })
})

describe('a postgres binding that may not reach private addresses', () => {
  it('is refused on its socket before connecting (service_unavailable); one that may connects', async () => {
    let accepted = 0
    const listener = createServer((socket) => {
      accepted += 1
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    const url = `postgres://someone@localhost:${(listener.address() as AddressInfo).port}/db`
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-registry-'))
    const registry = await createDatabaseRegistry({
      kind: 'sqlite',
      dataDir,
      resolveBinding: () => async (_projectId, id) => ({ id, kind: 'postgres', url, privateNetwork: id === 'vouched' }),
    })
    try {
      const refused = await registry.get(projectA, 'guarded').catch((err: unknown) => err)
      expect(refused).toMatchObject({ code: 'service_unavailable' })
      expect(accepted).toBe(0)
      // The same URL without the guard is its own pool, and does reach the server.
      await expect(registry.get(projectA, 'vouched')).rejects.toBeTruthy()
      expect(accepted).toBeGreaterThan(0)
    } finally {
      await registry.close()
      await new Promise((resolve) => listener.close(resolve))
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
