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

const AUDIT = '/api/v1/audit-log'
const get = (path: string, token?: string, headers?: Record<string, string>) =>
  server.request('GET', path, { token, headers })
const send = (method: string, path: string, token: string, body?: unknown, headers?: Record<string, string>) =>
  server.request(method, path, { token, body, headers })

interface Entry {
  id: string
  at: number
  action: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string | null } | null
  ip: string | null
  details: Record<string, unknown>
}

async function entries(action: string, headers?: Record<string, string>): Promise<Entry[]> {
  const reply = await get(`${AUDIT}?action=${encodeURIComponent(action)}&limit=100`, owner.token, headers)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

describe('GET /api/v1/audit-log', () => {
  it('answers the paging envelope, newest first', async () => {
    const reply = await get(AUDIT, admin.token)
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual(['data', 'hasMore', 'limit', 'page', 'total'])
    expect(reply.body).toMatchObject({ page: 1, limit: 25 })
    expect(reply.body.total).toBeGreaterThanOrEqual(2) // the two accounts created above
    const data = reply.body.data as Entry[]
    for (const entry of data) {
      expect(entry).toEqual({
        id: expect.any(String),
        at: expect.any(Number),
        action: expect.any(String),
        actor: { type: expect.any(String), id: expect.toBeOneOf([expect.any(String), null]) },
        target: expect.toBeOneOf([
          { type: expect.any(String), id: expect.toBeOneOf([expect.any(String), null]) },
          null,
        ]),
        ip: expect.toBeOneOf([expect.any(String), null]),
        details: expect.any(Object),
      })
    }
    const times = data.map((e) => e.at)
    expect(times).toEqual([...times].sort((a, b) => b - a))
  })

  it('pages without overlap, and the newest entry comes first', async () => {
    // Three entries written in this order, within the same second or not.
    for (const name of ['page_a', 'page_b', 'page_c'])
      expect((await send('POST', '/api/v1/roles', owner.token, { name })).status).toBe(201)
    const latest = await get(`${AUDIT}?action=role.created&limit=1`, owner.token)
    expect(latest.body.data[0].details).toMatchObject({ name: 'page_c' })

    const all = await get(`${AUDIT}?limit=100`, owner.token)
    const total = all.body.total as number
    expect(total).toBe(all.body.data.length)
    const seen: string[] = []
    for (let page = 1; ; page++) {
      const reply = await get(`${AUDIT}?page=${page}&limit=2`, owner.token)
      expect(reply.body).toMatchObject({ page, limit: 2, total, hasMore: page * 2 < total })
      seen.push(...(reply.body.data as Entry[]).map((e) => e.id))
      if (!reply.body.hasMore) break
    }
    expect(seen).toEqual((all.body.data as Entry[]).map((e) => e.id))
  })

  it('filters by action', async () => {
    const reply = await get(`${AUDIT}?action=user.created&limit=100`, owner.token)
    expect(reply.status).toBe(200)
    const data = reply.body.data as Entry[]
    expect(data.length).toBeGreaterThanOrEqual(2)
    expect(reply.body.total).toBe(data.length)
    for (const entry of data) expect(entry.action).toBe('user.created')
    expect(data.map((e) => e.target?.id)).toEqual(expect.arrayContaining([admin.id, viewer.id]))
    const none = await get(`${AUDIT}?action=no.such.action`, owner.token)
    expect(none.body).toMatchObject({ data: [], total: 0, hasMore: false })
  })

  runScenarios(
    () => server,
    [
      {
        name: 'viewer',
        method: 'GET',
        path: AUDIT,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden', message: expect.stringContaining('system/audit-log:read') },
      },
      { name: 'anonymous', method: 'GET', path: AUDIT, status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'limit over 100',
        method: 'GET',
        path: `${AUDIT}?limit=101`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'page 0',
        method: 'GET',
        path: `${AUDIT}?page=0`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('what is recorded', () => {
  it('role create, update and delete, with the actor and the role', async () => {
    const created = await send('POST', '/api/v1/roles', admin.token, { name: 'audited_role' })
    const id = created.body.data.id as string
    expect((await send('PATCH', `/api/v1/roles/${id}`, admin.token, { description: 'changed' })).status).toBe(200)
    expect((await send('DELETE', `/api/v1/roles/${id}`, admin.token)).status).toBe(200)
    const actor = { type: 'user', id: admin.id }
    const target = { type: 'role', id }
    expect((await entries('role.created')).find((e) => e.target?.id === id)).toMatchObject({
      actor,
      target,
      details: { name: 'audited_role', adminAccess: false },
    })
    expect((await entries('role.updated')).find((e) => e.target?.id === id)).toMatchObject({
      actor,
      target,
      details: { changed: ['description'] },
    })
    expect((await entries('role.deleted')).find((e) => e.target?.id === id)).toMatchObject({
      actor,
      target,
      details: { name: 'audited_role' },
    })
  })

  it('grant changes, and not refused ones', async () => {
    const created = await send('POST', '/api/v1/roles', owner.token, { name: 'granted_role' })
    const id = created.body.data.id as string
    const before = (await entries('grants.replaced')).length
    const grants = [
      { resource: 'collections/*', action: 'read' },
      { resource: 'system/files', action: 'read' },
    ]
    expect((await send('PUT', `/api/v1/roles/${id}/grants`, owner.token, { grants })).status).toBe(200)
    expect(
      (await send('PUT', `/api/v1/roles/${id}/grants`, owner.token, { grants: [{ resource: 'x', action: 'fly' }] }))
        .status,
    ).toBe(400)
    const after = await entries('grants.replaced')
    expect(after).toHaveLength(before + 1)
    expect(after[0]).toMatchObject({
      actor: { type: 'user', id: owner.id },
      target: { type: 'role', id },
      details: { role: 'granted_role', count: 2 },
    })
  })

  it('API key creation and revocation, never with the raw key', async () => {
    const created = await send('POST', '/api/auth/api-keys', admin.token, {
      label: 'audited key',
      capabilities: ['system/users:read'],
    })
    expect(created.status).toBe(201)
    const { id, raw } = created.body as { id: string; raw: string }
    expect((await send('DELETE', `/api/auth/api-keys/${id}`, admin.token)).status).toBe(200)
    const made = (await entries('apikey.created')).find((e) => e.target?.id === id)
    expect(made).toMatchObject({
      actor: { type: 'user', id: admin.id },
      target: { type: 'api_key', id },
      details: { label: 'audited key', capabilities: ['system/users:read'], service: false },
    })
    const revoked = (await entries('apikey.revoked')).find((e) => e.target?.id === id)
    expect(revoked).toMatchObject({ actor: { type: 'user', id: admin.id }, target: { type: 'api_key', id } })
    const whole = await get(`${AUDIT}?limit=100`, owner.token)
    expect(whole.text).not.toContain(raw)
    expect(whole.text).not.toContain(raw.slice(3))
  })

  it('an action taken with a key names the key as the actor', async () => {
    const created = await send('POST', '/api/auth/api-keys', owner.token, {
      label: 'role maker',
      capabilities: ['system/roles:create'],
    })
    const key = created.body as { id: string; raw: string }
    const role = await send('POST', '/api/v1/roles', key.raw, { name: 'made_by_key' })
    expect(role.status, role.text).toBe(201)
    expect((await entries('role.created')).find((e) => e.target?.id === role.body.data.id)).toMatchObject({
      actor: { type: 'api_key', id: key.id },
    })
  })

  it('user and settings changes, without passwords', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer', password: 'audit-password-123' })
    expect(
      (
        await send('PATCH', `/api/v1/users/${account.id}`, admin.token, {
          role: 'editor',
          password: 'another-password-456',
        })
      ).status,
    ).toBe(200)
    expect((await send('PATCH', '/api/v1/settings', admin.token, { 'ai.mcp_rate_limit': 77 })).status).toBe(200)
    expect((await send('DELETE', `/api/v1/users/${account.id}`, admin.token)).status).toBe(200)
    expect((await entries('user.updated')).find((e) => e.target?.id === account.id)).toMatchObject({
      actor: { type: 'user', id: admin.id },
      details: { role: 'editor', changed: expect.arrayContaining(['role', 'password']) },
    })
    expect((await entries('user.deleted')).find((e) => e.target?.id === account.id)).toMatchObject({
      actor: { type: 'user', id: admin.id },
    })
    expect((await entries('settings.updated'))[0]).toMatchObject({
      actor: { type: 'user', id: admin.id },
      details: { keys: ['ai.mcp_rate_limit'] },
    })
    const whole = await get(`${AUDIT}?limit=100`, owner.token)
    expect(whole.text).not.toContain('audit-password-123')
    expect(whole.text).not.toContain('another-password-456')
  })

  it('refused actions are not recorded as done', async () => {
    const before = (await entries('role.created')).length
    expect((await send('POST', '/api/v1/roles', viewer.token, { name: 'viewer_role' })).status).toBe(403)
    expect((await send('POST', '/api/v1/roles', owner.token, { name: 'editor' })).status).toBe(409)
    expect(await entries('role.created')).toHaveLength(before)
  })

  it('each project has its own log', async () => {
    const project = await send('POST', '/api/v1/projects', owner.token, { name: 'Audited project' })
    expect(project.status).toBe(201)
    const projectId = project.body.data.id as string
    expect((await entries('project.created')).find((e) => e.target?.id === projectId)).toMatchObject({
      actor: { type: 'user', id: owner.id },
      details: { name: 'Audited project' },
    })
    const there = { 'X-Project-Id': projectId }
    const role = await send('POST', '/api/v1/roles', owner.token, { name: 'there_role' }, there)
    expect(role.status).toBe(201)
    expect((await entries('role.created', there)).map((e) => e.target?.id)).toEqual([role.body.data.id])
    expect((await entries('role.created')).map((e) => e.target?.id)).not.toContain(role.body.data.id)
  })
})
