import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
let owner: Account
let admin: Account
let viewer: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

const SETTINGS = '/api/v1/settings'
const PROJECTS = '/api/v1/projects'
const get = (path: string, token?: string, headers?: Record<string, string>) =>
  server.request('GET', path, { token, headers })
const patchSettings = (token: string, body: unknown, headers?: Record<string, string>) =>
  server.request('PATCH', SETTINGS, { token, body, headers })
const settings = async (headers?: Record<string, string>): Promise<Record<string, unknown>> => {
  const reply = await get(SETTINGS, owner.token, headers)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

const defaults = {
  'auth.usernameEnabled': false,
  'auth.requireEmail': true,
  'ai.mcp_rate_limit': 100,
  'files.strategy': 'store_on_upload',
  'files.quotaBytes': 5 * 1024 ** 3,
}

describe('GET /api/v1/settings', () => {
  it('answers flat dotted keys with their defaults', async () => {
    const reply = await get(SETTINGS, admin.token)
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body)).toEqual(['data'])
    expect(reply.body.data).toMatchObject(defaults)
    for (const [key, value] of Object.entries(reply.body.data)) {
      expect(key).toMatch(/^[a-z][a-z0-9]*\.[A-Za-z_]+$/)
      expect(typeof value === 'object' && value !== null, key).toBe(false)
    }
  })
})

describe('PATCH /api/v1/settings', () => {
  it('changes only the keys sent, and GET shows the same', async () => {
    const before = await settings()
    const reply = await patchSettings(admin.token, { 'ai.mcp_rate_limit': 42 })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({ ...before, 'ai.mcp_rate_limit': 42 })
    expect(await settings()).toEqual({ ...before, 'ai.mcp_rate_limit': 42 })

    const second = await patchSettings(owner.token, {
      'files.strategy': 'store_on_request',
      'auth.requireEmail': false,
    })
    expect(second.status, second.text).toBe(200)
    expect(await settings()).toEqual({
      ...before,
      'ai.mcp_rate_limit': 42,
      'files.strategy': 'store_on_request',
      'auth.requireEmail': false,
    })

    // Setting a value back to its default keeps it.
    expect(
      (
        await patchSettings(owner.token, {
          'ai.mcp_rate_limit': 100,
          'files.strategy': 'store_on_upload',
          'auth.requireEmail': true,
        })
      ).status,
    ).toBe(200)
    expect(await settings()).toEqual(before)
  })

  it('a setting takes effect: username sign-in opens and closes with auth.usernameEnabled', async () => {
    const username = `person_${Date.now().toString(36)}`
    const account = await createAccount(server, owner.token, { role: 'viewer', username })
    const signIn = () =>
      server.request('POST', '/api/auth/sign-in/username', { body: { username, password: account.password } })
    expect((await get('/api/auth/capabilities')).body.usernameEnabled).toBe(false)
    expect((await signIn()).status).toBe(404)

    expect((await patchSettings(admin.token, { 'auth.usernameEnabled': true })).status).toBe(200)
    expect((await get('/api/auth/capabilities')).body.usernameEnabled).toBe(true)
    const open = await signIn()
    expect(open.status, open.text).toBe(200)
    expect(open.body.user.id).toBe(account.id)

    expect((await patchSettings(admin.token, { 'auth.usernameEnabled': false })).status).toBe(200)
    expect((await signIn()).status).toBe(404)
  })

  describe('a refused patch writes nothing', () => {
    const rows: { name: string; body: unknown }[] = [
      { name: 'unknown key', body: { 'auth.nope': true } },
      { name: 'unknown key beside a valid one', body: { 'ai.mcp_rate_limit': 7, 'nope.key': 1 } },
      { name: 'nested instead of dotted', body: { ai: { mcp_rate_limit: 7 } } },
      { name: 'boolean as a string', body: { 'auth.usernameEnabled': 'yes' } },
      { name: 'boolean as a number', body: { 'auth.requireEmail': 0 } },
      { name: 'rate limit as a string', body: { 'ai.mcp_rate_limit': '100' } },
      { name: 'rate limit not an integer', body: { 'ai.mcp_rate_limit': 1.5 } },
      { name: 'rate limit zero', body: { 'ai.mcp_rate_limit': 0 } },
      { name: 'rate limit null', body: { 'ai.mcp_rate_limit': null } },
      { name: 'unknown strategy', body: { 'files.strategy': 'sometimes' } },
      { name: 'negative quota', body: { 'files.quotaBytes': -1 } },
      { name: 'valid key, then a bad value', body: { 'ai.mcp_rate_limit': 7, 'files.quotaBytes': 'lots' } },
      { name: 'empty patch', body: {} },
      { name: 'a list', body: [{ 'ai.mcp_rate_limit': 7 }] },
    ]
    it.each(rows)('$name → 400 invalid_request', async ({ body }) => {
      const before = await settings()
      const reply = await patchSettings(owner.token, body)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({
        error: 'invalid_request',
        message: expect.any(String),
        details: expect.any(Object),
      })
      expect(await settings()).toEqual(before)
    })

    it('the refusal names the unknown key', async () => {
      const reply = await patchSettings(owner.token, { 'auth.nope': true })
      expect(reply.body.message).toContain('auth.nope')
      expect(reply.body.details).toMatchObject({ key: 'auth.nope' })
    })
  })

  it('each project has its own settings', async () => {
    const project = await server.request('POST', PROJECTS, { token: owner.token, body: { name: 'Settings project' } })
    const there = { 'X-Project-Id': project.body.data.id as string }
    expect((await patchSettings(owner.token, { 'ai.mcp_rate_limit': 9 }, there)).status).toBe(200)
    expect((await settings(there))['ai.mcp_rate_limit']).toBe(9)
    expect((await settings())['ai.mcp_rate_limit']).toBe(100)
  })
})

describe('who may call the settings endpoints', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'viewer reads',
        method: 'GET',
        path: SETTINGS,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden', message: expect.stringContaining('system/settings:read') },
      },
      {
        name: 'viewer writes',
        method: 'PATCH',
        path: SETTINGS,
        as: () => viewer.token,
        body: { 'ai.mcp_rate_limit': 1 },
        status: 403,
        contains: { error: 'forbidden', message: expect.stringContaining('system/settings:update') },
      },
      {
        name: 'viewer sends a bad patch: still 403, not 400',
        method: 'PATCH',
        path: SETTINGS,
        as: () => viewer.token,
        body: { nope: 1 },
        status: 403,
      },
      { name: 'anonymous reads', method: 'GET', path: SETTINGS, status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'anonymous writes',
        method: 'PATCH',
        path: SETTINGS,
        body: { 'ai.mcp_rate_limit': 1 },
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )

  it('nothing they sent was applied', async () => {
    expect((await settings())['ai.mcp_rate_limit']).toBe(100)
  })
})

describe('GET and POST /api/v1/projects', () => {
  it('the owner lists the projects, the default one first', async () => {
    const reply = await get(PROJECTS, owner.token)
    expect(reply.status).toBe(200)
    const [first] = reply.body.data
    expect(first).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: expect.any(String),
      isDefault: true,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    })
    expect((reply.body.data as any[]).filter((p) => p.isDefault)).toHaveLength(1)
    const me = await get('/api/auth/get-session', owner.token)
    expect(me.body.user.projectId).toBe(first.id)
  })

  it('the owner creates a project (201) that the list then shows', async () => {
    const reply = await server.request('POST', PROJECTS, { token: owner.token, body: { name: '  Marketing site ' } })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        name: 'Marketing site',
        isDefault: false,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      },
    })
    const list = await get(PROJECTS, owner.token)
    expect(list.body.data).toContainEqual(reply.body.data)
  })

  it('a new project has its own six built-in roles with their defaults', async () => {
    const created = await server.request('POST', PROJECTS, { token: owner.token, body: { name: 'Roles project' } })
    const there = { 'X-Project-Id': created.body.data.id as string }
    const custom = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: 'home_only' } })
    expect(custom.status).toBe(201)

    const home = (await get('/api/v1/roles', owner.token)).body.data as any[]
    const reply = await get('/api/v1/roles', owner.token, there)
    expect(reply.status, reply.text).toBe(200)
    const roles = reply.body.data as any[]
    expect(roles.map((r) => [r.name, r.adminAccess, r.builtIn]).sort()).toEqual(
      [
        ['super_admin', true, true],
        ['admin', true, true],
        ['editor', false, true],
        ['viewer', false, true],
        ['api', false, true],
        ['public', false, true],
      ].sort(),
    )
    const homeIds = new Set(home.map((r) => r.id))
    for (const role of roles) expect(homeIds.has(role.id), role.name).toBe(false)

    const editor = roles.find((r) => r.name === 'editor')
    const grants = await get(`/api/v1/roles/${editor.id}/grants`, owner.token, there)
    expect(grants.status).toBe(200)
    expect(grants.body.data).toHaveLength(28)
    expect(grants.body.data).toContainEqual({
      resource: 'system/files',
      action: 'update',
      item_filter: { uploadedBy: { _eq: '$CURRENT_USER' } },
      fields: null,
    })
    // A role of one project is missing in another.
    expect((await get(`/api/v1/roles/${editor.id}/grants`, owner.token)).status).toBe(404)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'empty name',
        method: 'POST',
        path: PROJECTS,
        as: () => owner.token,
        body: { name: '' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'blank name',
        method: 'POST',
        path: PROJECTS,
        as: () => owner.token,
        body: { name: '   ' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'name over 200 characters',
        method: 'POST',
        path: PROJECTS,
        as: () => owner.token,
        body: { name: 'p'.repeat(201) },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no name',
        method: 'POST',
        path: PROJECTS,
        as: () => owner.token,
        body: {},
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an admin may not list',
        method: 'GET',
        path: PROJECTS,
        as: () => admin.token,
        status: 403,
        contains: { error: 'forbidden', message: expect.stringContaining('instance/projects:read') },
      },
      {
        name: 'an admin may not create',
        method: 'POST',
        path: PROJECTS,
        as: () => admin.token,
        body: { name: 'Admin project' },
        status: 403,
        contains: { error: 'forbidden' },
      },
      {
        name: 'a viewer may not list',
        method: 'GET',
        path: PROJECTS,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden' },
      },
      {
        name: 'anonymous may not list',
        method: 'GET',
        path: PROJECTS,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'anonymous may not create',
        method: 'POST',
        path: PROJECTS,
        body: { name: 'Anon project' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )

  it('the refused projects were not created', async () => {
    const names = ((await get(PROJECTS, owner.token)).body.data as any[]).map((p) => p.name)
    expect(names).not.toContain('Admin project')
    expect(names).not.toContain('Anon project')
  })
})

describe('X-Project-Id', () => {
  let projectId: string
  beforeAll(async () => {
    const reply = await server.request('POST', PROJECTS, { token: owner.token, body: { name: 'Header project' } })
    projectId = reply.body.data.id
  })

  it('lets the super_admin act in another project', async () => {
    const reply = await get('/api/v1/users', owner.token, { 'X-Project-Id': projectId })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ data: [], total: 0 })
  })

  it('is 403 for anyone else, even for an admin', async () => {
    for (const token of [() => admin.token, () => viewer.token]) {
      const reply = await get('/api/v1/roles', token(), { 'X-Project-Id': projectId })
      expect(reply.status).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
  })

  it("naming one's own project is no change", async () => {
    const home = (await get('/api/auth/get-session', admin.token)).body.user.projectId
    const reply = await get('/api/v1/users', admin.token, { 'X-Project-Id': home })
    expect(reply.status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown project id',
        method: 'GET',
        path: '/api/v1/users',
        as: () => owner.token,
        headers: { 'X-Project-Id': 'a'.repeat(32) },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'malformed project id',
        method: 'GET',
        path: '/api/v1/users',
        as: () => owner.token,
        headers: { 'X-Project-Id': 'not-a-project' },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'anonymous naming an unknown project',
        method: 'GET',
        path: '/api/v1/roles',
        headers: { 'X-Project-Id': 'b'.repeat(32) },
        status: 404,
        contains: { error: 'not_found' },
      },
    ],
  )
})
