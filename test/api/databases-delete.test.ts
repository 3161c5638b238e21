import { existsSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { roleId, signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import {
  accountWithGrants,
  createCollection,
  createRecord,
  field,
  listedNames,
  uniqueName,
} from './collections-support.js'

/**
 * DELETE /api/v1/databases/:id?cascade= (core-api § Collection schema endpoints): refused while
 * collections are attached unless cascade; with cascade they leave the registry with their grants and
 * shares; Plinth's own SQLite file goes, tables in a PostgreSQL database are left and reported.
 */

let server: TestServer
let owner: Account
let pgTarget: { url: string; drop: () => Promise<void> } | null = null

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  if (testDatabaseUrl()) pgTarget = await createTestDatabase(testDatabaseUrl()!)
})
afterAll(async () => {
  await server?.stop()
  await pgTarget?.drop()
})

const remove = (id: string, query = '', token: string | undefined = owner.token): Promise<Reply> =>
  server.request('DELETE', `/api/v1/databases/${id}${query}`, { token })
const sqliteFile = (id: string) => join(server.dataDir, 'databases', `${id}.db`)

async function register(body: Record<string, unknown>): Promise<string> {
  const reply = await server.request('POST', '/api/v1/databases', { token: owner.token, body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id
}

async function registeredIds(): Promise<string[]> {
  const reply = await server.request('GET', '/api/v1/databases', { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data.map((d: { id: string }) => d.id)
}

/** A remote collection on the binding, with one record. */
async function attach(
  databaseId: string,
  extra: Record<string, unknown> = {},
): Promise<{ name: string; recordId: string }> {
  const name = uniqueName('remote')
  await createCollection(server, owner.token, {
    name,
    storageType: 'remote',
    databaseId,
    fields: [field('title', 'text')],
    ...extra,
  })
  const record = await createRecord(server, owner.token, name, { title: 'there' })
  return { name, recordId: record.id }
}

async function grantsOf(role: string): Promise<{ resource: string; action: string }[]> {
  const reply = await server.request('GET', `/api/v1/roles/${await roleId(server, owner.token, role)}/grants`, {
    token: owner.token,
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data.map((g: any) => ({ resource: g.resource, action: g.action }))
}

describe('a database without collections', () => {
  it('is deleted: 200 with the log, its file gone, no longer listed, audited', async () => {
    const id = await register({ name: uniqueName('empty'), kind: 'sqlite' })
    expect(existsSync(sqliteFile(id))).toBe(true)
    const reply = await remove(id)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true, cleanupLog: expect.any(Array), manualCleanupRequired: false })
    expect(reply.body.cleanupLog.join('\n')).toMatch(/Deleted the SQLite file/)
    expect(existsSync(sqliteFile(id))).toBe(false)
    expect(await registeredIds()).not.toContain(id)
    const audit = await server.request('GET', '/api/v1/audit-log?action=database.deleted&limit=100', {
      token: owner.token,
    })
    expect(audit.body.data.find((e: any) => e.target?.id === id)).toMatchObject({
      details: { cascade: false, collections: [] },
    })
    // Gone is gone: a second delete is 404.
    const again = await remove(id)
    expect(again.status, again.text).toBe(404)
    expect(again.body.error).toBe('not_found')
  })

  it('an unknown or malformed id is 404 not_found', async () => {
    for (const id of ['0123456789abcdef0123456789abcdef', 'main', 'no-such']) {
      const reply = await remove(id)
      expect(reply.status, reply.text).toBe(404)
      expect(reply.body.error).toBe('not_found')
    }
  })

  it('a database of another project is 404 and stays', async () => {
    const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'Other' } })
    expect(project.status, project.text).toBe(201)
    const headers = { 'X-Project-Id': project.body.data.id }
    const made = await server.request('POST', '/api/v1/databases', {
      token: owner.token,
      headers,
      body: { name: 'theirs', kind: 'sqlite' },
    })
    expect(made.status, made.text).toBe(201)
    expect((await remove(made.body.data.id)).status).toBe(404)
    const theirs = await server.request('GET', '/api/v1/databases', { token: owner.token, headers })
    expect(theirs.body.data.map((d: { id: string }) => d.id)).toContain(made.body.data.id)
  })

  it('a cascade value other than true, false, 1 or 0 is 400', async () => {
    const id = await register({ name: uniqueName('flag'), kind: 'sqlite' })
    const reply = await remove(id, '?cascade=yes')
    expect(reply.status, reply.text).toBe(400)
    expect(await registeredIds()).toContain(id)
  })
})

describe('a database with collections', () => {
  it('without cascade: 409 conflict stating the count; nothing changes', async () => {
    const id = await register({ name: uniqueName('busy'), kind: 'sqlite' })
    const first = await attach(id)
    const second = await attach(id)
    for (const query of ['', '?cascade=false']) {
      const reply = await remove(id, query)
      expect(reply.status, reply.text).toBe(409)
      expect(reply.body.error).toBe('conflict')
      expect(reply.body.message).toMatch(/^2 collections are attached/)
      expect(reply.body.details).toEqual({ count: 2, collections: expect.arrayContaining([first.name, second.name]) })
    }
    expect(await registeredIds()).toContain(id)
    expect(await listedNames(server, owner.token)).toEqual(expect.arrayContaining([first.name, second.name]))
    const read = await server.request('GET', `/api/v1/collections/${first.name}/records/${first.recordId}`, {
      token: owner.token,
    })
    expect(read.status, read.text).toBe(200)
  })

  it('with cascade on a SQLite database: the collections, their grants and shares go, the file goes; others stay', async () => {
    const id = await register({ name: uniqueName('lite'), kind: 'sqlite' })
    const a = await attach(id, { accessControl: { preset: 'private', sharing: true } })
    const b = await attach(id)
    const local = uniqueName('local')
    await createCollection(server, owner.token, { name: local, fields: [field('title', 'text')] })
    const member = await accountWithGrants(server, owner.token, [
      { resource: `collections/${a.name}`, action: 'read' },
      { resource: `collections/${b.name}`, action: 'update' },
      { resource: `collections/${local}`, action: 'read' },
      { resource: 'collections/*', action: 'create' },
    ])
    const share = await server.request('POST', `/api/v1/collections/${a.name}/records/${a.recordId}/shares`, {
      token: owner.token,
      body: { userId: member.id, access: 'view' },
    })
    expect(share.status, share.text).toBe(201)
    const collectionIds = await Promise.all(
      [a.name, b.name].map(
        async (name) =>
          (await server.request('GET', `/api/v1/collections/${name}`, { token: owner.token })).body.data.id as string,
      ),
    )

    const reply = await remove(id, '?cascade=true')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.success).toBe(true)
    expect(reply.body.manualCleanupRequired).toBe(false)
    const log = reply.body.cleanupLog.join('\n')
    expect(log).toContain(`Removed collection ${a.name} from the registry, with 1 grant`)
    expect(log).toContain(`Removed collection ${b.name} from the registry, with 1 grant`)
    expect(log).toMatch(/Deleted the SQLite file/)

    expect(await registeredIds()).not.toContain(id)
    expect(existsSync(sqliteFile(id))).toBe(false)
    const names = await listedNames(server, owner.token)
    expect(names).not.toContain(a.name)
    expect(names).not.toContain(b.name)
    expect(names).toContain(local)
    const gone = await server.request('GET', `/api/v1/collections/${a.name}/records`, { token: owner.token })
    expect(gone.status, gone.text).toBe(404)
    expect(gone.body.error).toBe('collection_not_found')
    expect(await grantsOf(member.role)).toEqual([
      { resource: `collections/${local}`, action: 'read' },
      { resource: 'collections/*', action: 'create' },
    ])
    const shares = await server.app.registry.system.db
      .selectFrom('record_shares')
      .select('id')
      .where('collection_id', 'in', collectionIds)
      .execute()
    expect(shares).toEqual([])

    // The name is free again, and a new collection of that name starts empty and ungranted.
    await createCollection(server, owner.token, { name: a.name, fields: [field('title', 'text')] })
    const fresh = await server.request('GET', `/api/v1/collections/${a.name}/records`, { token: owner.token })
    expect(fresh.body.data).toEqual([])
    const denied = await server.request('GET', `/api/v1/collections/${a.name}/records`, { token: member.token })
    expect(denied.status, denied.text).toBe(403)

    const audit = await server.request('GET', '/api/v1/audit-log?action=database.deleted&limit=100', {
      token: owner.token,
    })
    expect(audit.body.data.find((e: any) => e.target?.id === id)).toMatchObject({
      details: { cascade: true, collections: [a.name, b.name].sort() },
    })
  })

  it('a relation from a collection elsewhere into one of them: 409, nothing removed', async () => {
    const id = await register({ name: uniqueName('linked'), kind: 'sqlite' })
    const target = await attach(id)
    const holder = uniqueName('holder')
    await createCollection(server, owner.token, {
      name: holder,
      fields: [
        field('link', 'relation', {
          relationConfig: { targetCollection: target.name, relationType: 'belongsTo', onDelete: 'set-null' },
        }),
      ],
    })
    const reply = await remove(id, '?cascade=true')
    expect(reply.status, reply.text).toBe(409)
    expect(reply.body.message).toContain(`${holder}.link`)
    expect(await registeredIds()).toContain(id)
    expect(existsSync(sqliteFile(id))).toBe(true)
    expect(await listedNames(server, owner.token)).toContain(target.name)
    const read = await server.request('GET', `/api/v1/collections/${target.name}/records/${target.recordId}`, {
      token: owner.token,
    })
    expect(read.status, read.text).toBe(200)
  })

  it('relations among the attached collections themselves do not block', async () => {
    const id = await register({ name: uniqueName('pair'), kind: 'sqlite' })
    const parent = await attach(id)
    const child = uniqueName('child')
    await createCollection(server, owner.token, {
      name: child,
      storageType: 'remote',
      databaseId: id,
      fields: [
        field('parent', 'relation', {
          relationConfig: { targetCollection: parent.name, relationType: 'belongsTo', onDelete: 'set-null' },
        }),
      ],
    })
    const reply = await remove(id, '?cascade=1')
    expect(reply.status, reply.text).toBe(200)
    expect(await listedNames(server, owner.token)).not.toContain(child)
  })
})

describe.runIf(testDatabaseUrl() !== null)('a PostgreSQL database', () => {
  async function tableExists(table: string): Promise<boolean> {
    const client = new pg.Client({ connectionString: pgTarget!.url })
    await client.connect()
    try {
      return (
        (
          await client.query('select 1 from information_schema.tables where table_schema = $1 and table_name = $2', [
            'public',
            table,
          ])
        ).rows.length > 0
      )
    } finally {
      await client.end()
    }
  }

  it('with cascade: the collections leave the registry, their tables stay there and are reported', async () => {
    const id = await register({ name: uniqueName('pg'), kind: 'postgres', url: pgTarget!.url })
    const a = await attach(id)
    expect(await tableExists(a.name)).toBe(true)
    const reply = await remove(id, '?cascade=true')
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.manualCleanupRequired).toBe(true)
    const line = reply.body.cleanupLog.find((l: string) => l.startsWith(`Left table ${a.name} in `))
    expect(line).toContain(`postgres://${new URL(pgTarget!.url).host}`)
    expect(await tableExists(a.name)).toBe(true)
    expect(await listedNames(server, owner.token)).not.toContain(a.name)
    expect(await registeredIds()).not.toContain(id)
  })

  it('without collections: nothing is left behind', async () => {
    const id = await register({ name: uniqueName('pg'), kind: 'postgres', url: pgTarget!.url })
    const reply = await remove(id)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.manualCleanupRequired).toBe(false)
  })
})

describe('permissions', () => {
  it('system/databases:read is 403, anonymous 401; manage deletes', async () => {
    const id = await register({ name: uniqueName('perm'), kind: 'sqlite' })
    const reader = await accountWithGrants(server, owner.token, [{ resource: 'system/databases', action: 'read' }])
    const reply = await remove(id, '', reader.token)
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.message).toContain('system/databases:manage')
    expect((await server.request('DELETE', `/api/v1/databases/${id}`)).status).toBe(401)
    expect(await registeredIds()).toContain(id)
    const manager = await accountWithGrants(server, owner.token, [{ resource: 'system/databases', action: 'manage' }])
    expect((await remove(id, '', manager.token)).status).toBe(200)
  })
})
