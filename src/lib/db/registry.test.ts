import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, testDatabaseUrl } from '../../../test/support/postgres.js'
import { dialects } from '../../../test/support/dialects.js'
import type { DbKind } from './handle.js'
import { createDatabaseRegistry, type BindingDescriptor, type DatabaseRegistry } from './registry.js'

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

  it('refuses an unknown binding, another project\'s binding and unsafe ids with not_found', async () => {
    const { registry } = await open({ archive: { id: 'archive', kind: 'sqlite' } })
    await expect(registry.get(projectA, 'nope')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get(projectB, 'archive')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get('../../etc')).rejects.toMatchObject({ code: 'not_found' })
    await expect(registry.get(projectA, 'x"; drop schema plinth;--')).rejects.toMatchObject({ code: 'not_found' })
  })
})

describe.runIf(testDatabaseUrl())('a registered postgres binding', () => {
  it('opens a schema on another server URL', async () => {
    const external = await createTestDatabase(testDatabaseUrl()!)
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-registry-'))
    const registry = await createDatabaseRegistry({
      kind: 'sqlite',
      dataDir,
      resolveBinding: () => async () => ({ id: 'warehouse', kind: 'postgres', url: external.url, schema: 'warehouse', privateNetwork: true }),
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
