import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { runScenarios } from '../support/scenarios.js'
import { accountWithGrants, uniqueName } from './collections-support.js'

/**
 * GET and POST /api/v1/databases: the binding shape (never credentials), name rules, the sqlite/postgres
 * rules, an unreachable server registering nothing, and the system/databases permissions. Remote
 * collections on these bindings are in collections-remote.test.ts.
 */

let server: TestServer
let owner: Account
let viewer: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

const register = (body: unknown, token: string | null = owner.token) =>
  server.request('POST', '/api/v1/databases', { token: token ?? undefined, body })
const list = (token: string | null = owner.token) =>
  server.request('GET', '/api/v1/databases', { token: token ?? undefined })
const listedNames = async () => {
  const reply = await list()
  expect(reply.status, reply.text).toBe(200)
  return (reply.body.data as { name: string }[]).map((d) => d.name)
}

describe('POST /api/v1/databases', () => {
  it('registers a sqlite database: 201 { data } with id, name, kind, location null, createdAt; the list shows it', async () => {
    expect(await list()).toMatchObject({ status: 200, body: { data: [] } })
    const before = Math.floor(Date.now() / 1000)
    const reply = await register({ name: 'archive', kind: 'sqlite' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        name: 'archive',
        kind: 'sqlite',
        location: null,
        createdAt: expect.any(Number),
      },
    })
    expect(reply.body.data.createdAt).toBeGreaterThanOrEqual(before)
    expect(reply.body.data.createdAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    const listed = await list()
    expect(Object.keys(listed.body)).toEqual(['data'])
    expect(listed.body.data).toContainEqual(reply.body.data)
  })

  it('accepts names of 1 and 50 characters with digits, - and _', async () => {
    for (const name of ['a', 'my-db_2', `d${'x'.repeat(49)}`]) {
      const reply = await register({ name, kind: 'sqlite' })
      expect(reply.status, `${name}: ${reply.text}`).toBe(201)
      expect(reply.body.data.name).toBe(name)
    }
  })

  it('a taken name is 409 already_exists; the first binding stays the only one', async () => {
    const first = await register({ name: 'twin', kind: 'sqlite' })
    expect(first.status).toBe(201)
    const again = await register({ name: 'twin', kind: 'sqlite' })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ error: 'already_exists', details: { fields: ['name'] } })
    const twins = ((await list()).body.data as { name: string; id: string }[]).filter((d) => d.name === 'twin')
    expect(twins).toEqual([expect.objectContaining({ id: first.body.data.id })])
  })

  describe('refusals register nothing', () => {
    const refused = [
      { name: 'upper-case name', body: { name: 'Archive', kind: 'sqlite' } },
      { name: 'name starting with a digit', body: { name: '1db', kind: 'sqlite' } },
      { name: 'name starting with a hyphen', body: { name: '-db', kind: 'sqlite' } },
      { name: 'name with a space', body: { name: 'my db', kind: 'sqlite' } },
      { name: 'name with a dot', body: { name: 'my.db', kind: 'sqlite' } },
      { name: 'empty name', body: { name: '', kind: 'sqlite' } },
      { name: 'name of 51 characters', body: { name: `d${'x'.repeat(50)}`, kind: 'sqlite' } },
      { name: 'no name', body: { kind: 'sqlite' } },
      { name: 'unknown kind', body: { name: 'refused_kind', kind: 'mysql' } },
      { name: 'no kind', body: { name: 'refused_kind' } },
      {
        name: 'sqlite with a url',
        body: { name: 'refused_sqlite', kind: 'sqlite', url: 'postgres://127.0.0.1:5432/x' },
      },
      { name: 'sqlite with a file url', body: { name: 'refused_sqlite', kind: 'sqlite', url: 'file:/tmp/x.db' } },
      { name: 'postgres without url', body: { name: 'refused_pg', kind: 'postgres' } },
      {
        name: 'postgres with a non-postgres url',
        body: { name: 'refused_pg', kind: 'postgres', url: 'mysql://127.0.0.1/x' },
      },
      { name: 'postgres with an empty url', body: { name: 'refused_pg', kind: 'postgres', url: '' } },
    ]
    runScenarios(
      () => server,
      refused.map((r) => ({
        ...r,
        method: 'POST',
        path: '/api/v1/databases',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      })),
    )

    it('an unreachable postgres server is 400 invalid_request and registers nothing', async () => {
      const url = 'postgres://nobody:topsecret@127.0.0.1:1/x'
      const reply = await register({ name: 'unreachable', kind: 'postgres', url })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(reply.text).not.toContain('topsecret')
      expect(await listedNames()).not.toContain('unreachable')
      // The name was not kept: it can be registered now.
      expect((await register({ name: 'unreachable', kind: 'sqlite' })).status).toBe(201)
    })

    it('none of the refused names were registered', async () => {
      const names = await listedNames()
      for (const r of refused) {
        const name = (r.body as { name?: string }).name
        if (name !== undefined) expect(names, r.name).not.toContain(name)
      }
    })
  })

  describe.runIf(testDatabaseUrl() !== null)('postgres (TEST_DATABASE_URL)', () => {
    let target: { url: string; drop: () => Promise<void> }
    const password = 'pw-9f3a1c7e-never-shown'
    beforeAll(async () => {
      target = await createTestDatabase(testDatabaseUrl()!)
    })
    afterAll(async () => {
      // The server's pool on the target closes when the server stops; the drop forces the rest.
      await target?.drop()
    })

    it('registers a reachable server; location is the host and database, the password never appears', async () => {
      const withPassword = new URL(target.url)
      withPassword.password = password
      withPassword.searchParams.set('application_name', 'plinth-binding')
      const reply = await register({ name: 'warehouse', kind: 'postgres', url: withPassword.toString() })
      expect(reply.status, reply.text).toBe(201)
      const plain = new URL(target.url)
      expect(reply.body.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        name: 'warehouse',
        kind: 'postgres',
        location: `postgres://${plain.host}${plain.pathname}`,
        createdAt: expect.any(Number),
      })
      const listed = await list()
      expect(listed.body.data).toContainEqual(reply.body.data)
      const audit = await server.request('GET', '/api/v1/audit-log?limit=100', { token: owner.token })
      expect(audit.status).toBe(200)
      expect(audit.text).toContain('database.created')
      for (const text of [reply.text, listed.text, audit.text]) {
        expect(text).not.toContain(password)
        expect(text).not.toContain(encodeURIComponent(password))
        expect(text).not.toContain('application_name')
      }
      expect(server.logs.join('\n')).not.toContain(password)
    })

    it('a reachable server without that database is 400 and registers nothing', async () => {
      const missing = new URL(target.url)
      missing.pathname = `/${uniqueName('no_such_db')}`
      const reply = await register({ name: 'ghost', kind: 'postgres', url: missing.toString() })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(await listedNames()).not.toContain('ghost')
    })
  })
})

describe('permissions', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'anonymous list',
        method: 'GET',
        path: '/api/v1/databases',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'anonymous register',
        method: 'POST',
        path: '/api/v1/databases',
        body: { name: 'by_anonymous', kind: 'sqlite' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a viewer lists',
        method: 'GET',
        path: '/api/v1/databases',
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden', details: { resource: 'system/databases', action: 'read' } },
      },
      {
        name: 'a viewer registers',
        method: 'POST',
        path: '/api/v1/databases',
        as: () => viewer.token,
        body: { name: 'by_viewer', kind: 'sqlite' },
        status: 403,
        contains: { error: 'forbidden', details: { resource: 'system/databases', action: 'manage' } },
      },
    ],
  )

  it('system/databases:read lists but may not register', async () => {
    const reader = await accountWithGrants(server, owner.token, [{ resource: 'system/databases', action: 'read' }])
    const reply = await list(reader.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual((await list()).body.data)
    const refused = await register({ name: 'by_reader', kind: 'sqlite' }, reader.token)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('forbidden')
  })

  it('system/databases:manage registers and lists; an admin may too', async () => {
    const manager = await accountWithGrants(server, owner.token, [{ resource: 'system/databases', action: 'manage' }])
    expect((await register({ name: 'by_manager', kind: 'sqlite' }, manager.token)).status).toBe(201)
    expect((await list(manager.token)).status).toBe(200)
    const admin = await createAccount(server, owner.token, { role: 'admin' })
    expect((await register({ name: 'by_admin', kind: 'sqlite' }, admin.token)).status).toBe(201)
  })

  it('refused callers registered nothing', async () => {
    const names = await listedNames()
    expect(names).not.toContain('by_anonymous')
    expect(names).not.toContain('by_viewer')
    expect(names).not.toContain('by_reader')
    expect(names).toEqual(expect.arrayContaining(['by_manager', 'by_admin']))
  })
})

describe('projects', () => {
  it('a binding belongs to its project: another project neither lists it nor blocks its name', async () => {
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: uniqueName('other') },
    })
    expect(project.status, project.text).toBe(201)
    const inOther = { 'x-project-id': project.body.data.id }
    const created = await server.request('POST', '/api/v1/databases', {
      token: owner.token,
      headers: inOther,
      body: { name: 'archive', kind: 'sqlite' },
    })
    expect(created.status, created.text).toBe(201)
    const otherList = await server.request('GET', '/api/v1/databases', { token: owner.token, headers: inOther })
    expect(otherList.body.data).toEqual([created.body.data])
    const home = (await list()).body.data as { id: string }[]
    expect(home.map((d) => d.id)).not.toContain(created.body.data.id)
  })
})
