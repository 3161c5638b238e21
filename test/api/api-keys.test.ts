import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock, type ManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { routePermissions } from '../support/route-table.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
// On a whole second, so the test knows when the server's whole-second time turns.
const clock: ManualClock = createManualClock(Math.floor(Date.now() / 1000) * 1000)
let owner: Account
let admin: Account
let editor: Account

beforeAll(async () => {
  server = await startServer({}, { clock })
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

const KEYS = '/api/auth/api-keys'
const get = (path: string, token?: string, headers?: Record<string, string>) =>
  server.request('GET', path, { token, headers })
/** The server's time, which moves only when the test advances it. */
const nowSeconds = () => clock.seconds()

interface CreatedKey {
  id: string
  label: string
  capabilities: string[]
  raw: string
  created_at: number
  expires_at: number | null
}

let seq = 0
async function createKey(
  token: string,
  capabilities: string[],
  extra: Record<string, unknown> = {},
): Promise<CreatedKey> {
  const reply = await server.request('POST', KEYS, { token, body: { label: `key ${seq++}`, capabilities, ...extra } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

async function listKeys(token: string): Promise<any[]> {
  const reply = await get(KEYS, token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** A user whose custom role holds exactly the given permissions. */
async function accountWith(grants: { resource: string; action: string }[]): Promise<Account & { roleName: string }> {
  const roleName = `keyrole_${Date.now().toString(36)}_${seq++}`
  const created = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: roleName } })
  expect(created.status, created.text).toBe(201)
  await setGrants(server, owner.token, roleName, grants)
  return { ...(await createAccount(server, owner.token, { role: roleName })), roleName }
}

describe('POST /api/auth/api-keys', () => {
  it('answers 201 with the key once, uncached', async () => {
    const before = nowSeconds()
    const reply = await server.request('POST', KEYS, {
      token: admin.token,
      body: { label: '  CI deploy  ', capabilities: ['system/users:read', 'system/users:read', 'system/roles:read'] },
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.headers.get('cache-control')).toBe('no-store')
    expect(Object.keys(reply.body).sort()).toEqual(['capabilities', 'created_at', 'expires_at', 'id', 'label', 'raw'])
    expect(reply.body).toEqual({
      id: expect.any(String),
      label: 'CI deploy',
      capabilities: ['system/users:read', 'system/roles:read'],
      raw: expect.stringMatching(/^sk-[A-Za-z0-9_-]{20,}$/),
      created_at: expect.any(Number),
      expires_at: null,
    })
    expect(reply.body.created_at).toBeGreaterThanOrEqual(before)
    expect(reply.body.created_at).toBeLessThanOrEqual(nowSeconds())
  })

  it('keeps a future expires_at as sent', async () => {
    const expires = nowSeconds() + 3600
    const key = await createKey(admin.token, ['system/users:read'], { expires_at: expires })
    expect(key.expires_at).toBe(expires)
    expect((await listKeys(admin.token)).find((k) => k.id === key.id).expires_at).toBe(expires)
  })

  it('two keys never share a raw value', async () => {
    const a = await createKey(editor.token, [])
    const b = await createKey(editor.token, [])
    expect(a.raw).not.toBe(b.raw)
    expect(a.id).not.toBe(b.id)
  })

  it("refuses capabilities beyond the creator's permissions (403 naming them) and creates nothing", async () => {
    const before = await listKeys(editor.token)
    const reply = await server.request('POST', KEYS, {
      token: editor.token,
      body: { label: 'too much', capabilities: ['collections/*:read', 'system/users:read', 'system/settings:update'] },
    })
    expect(reply.status).toBe(403)
    expect(reply.body).toMatchObject({
      error: 'forbidden',
      details: { missing: ['system/users:read', 'system/settings:update'] },
    })
    expect(reply.body.message).toContain('system/users:read')
    expect(reply.body.message).toContain('system/settings:update')
    expect(reply.body.message).not.toContain('collections/*:read')
    expect(await listKeys(editor.token)).toEqual(before)
  })

  it('an admin cannot hand a key the instance (403)', async () => {
    const reply = await server.request('POST', KEYS, {
      token: admin.token,
      body: { label: 'x', capabilities: ['instance/projects:read'] },
    })
    expect(reply.status).toBe(403)
    expect(reply.body.details).toEqual({ missing: ['instance/projects:read'] })
  })

  it('an editor may give a key what the editor holds', async () => {
    const key = await createKey(editor.token, [
      'collections/*:read',
      'collections/articles:update',
      'system/files:create',
    ])
    expect(key.capabilities).toEqual(['collections/*:read', 'collections/articles:update', 'system/files:create'])
  })

  // Decision 012: a capability naming a resource Plinth never checks (`books:read`) was 201, then 403 on everything.
  it.each([
    'books:read',
    'system/books:read',
    'schema/articles:update',
    'collections/a/b:read',
    'instance/tenants:read',
  ])('a capability naming no resource Plinth knows (%s) is 400 naming it, and no key is made', async (capability) => {
    const before = await listKeys(owner.token)
    const reply = await server.request('POST', KEYS, {
      token: owner.token,
      body: { label: 'unknown resource', capabilities: ['collections/*:read', capability] },
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details: { capability } })
    expect(reply.body.message).toContain(`"${capability}"`)
    expect(await listKeys(owner.token)).toEqual(before)
  })

  it('every permission a route checks is a capability a key may hold', async () => {
    const permissions = await routePermissions(server, (param) => (param === 'name' ? 'articles' : param))
    expect(permissions).toEqual(
      expect.arrayContaining([
        'collections/*:read',
        'collections/articles:read',
        'schema/*:create',
        'system/files:read',
        'instance/projects:read',
      ]),
    )
    const key = await createKey(owner.token, [
      ...permissions,
      '*:read',
      'collections/*:manage',
      'system/*:read',
      'instance/*:read',
    ])
    expect(key.capabilities).toEqual(expect.arrayContaining(permissions))
  })

  runScenarios(
    () => server,
    [
      {
        name: 'malformed capability',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: ['users.read'] },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'unknown action',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: ['system/users:fly'] },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'one bad among good ones',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: ['system/users:read', 'Bad:read'] },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'capabilities not a list',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: 'system/users:read' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no capabilities',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no label',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { capabilities: [] },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'blank label',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: '   ', capabilities: [] },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'expires_at in the past',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: [], expires_at: nowSeconds() - 60 },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'expires_at not an integer',
        method: 'POST',
        path: KEYS,
        as: () => admin.token,
        body: { label: 'x', capabilities: [], expires_at: 'tomorrow' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'anonymous',
        method: 'POST',
        path: KEYS,
        body: { label: 'x', capabilities: [] },
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )

  it('none of the refused keys exist', async () => {
    const labels = (await listKeys(admin.token)).map((k) => k.label)
    expect(labels).not.toContain('x')
    expect(labels).not.toContain('too much')
  })
})

describe('GET /api/auth/api-keys', () => {
  it('lists keys without the raw value, and with last_used_at once used', async () => {
    const key = await createKey(admin.token, ['system/users:read'])
    const listed = await get(KEYS, admin.token)
    expect(listed.status).toBe(200)
    expect(Array.isArray(listed.body)).toBe(true)
    expect(listed.text).not.toContain(key.raw)
    expect(listed.text).not.toContain(key.raw.slice(3))
    for (const k of listed.body)
      expect(Object.keys(k).sort()).toEqual([
        'capabilities',
        'created_at',
        'expires_at',
        'id',
        'label',
        'last_used_at',
        'user_id',
      ])
    const entry = listed.body.find((k: any) => k.id === key.id)
    expect(entry).toEqual({
      id: key.id,
      label: key.label,
      capabilities: ['system/users:read'],
      user_id: admin.id,
      created_at: key.created_at,
      expires_at: null,
      last_used_at: null,
    })

    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    const after = (await listKeys(admin.token)).find((k) => k.id === key.id)
    expect(after.last_used_at).toEqual(expect.any(Number))
    expect(after.last_used_at).toBeGreaterThanOrEqual(key.created_at)
  })

  it('a non-admin sees only their own keys', async () => {
    const mine = await createKey(editor.token, ['collections/*:read'])
    const theirs = await createKey(admin.token, ['system/users:read'])
    const ids = (await listKeys(editor.token)).map((k) => k.id)
    expect(ids).toContain(mine.id)
    expect(ids).not.toContain(theirs.id)
    for (const k of await listKeys(editor.token)) expect(k.user_id).toBe(editor.id)
  })

  it('an admin sees every key of the project', async () => {
    const a = await createKey(editor.token, [])
    const b = await createKey(owner.token, ['system/settings:read'])
    const ids = (await listKeys(admin.token)).map((k) => k.id)
    expect(ids).toEqual(expect.arrayContaining([a.id, b.id]))
  })

  runScenarios(
    () => server,
    [{ name: 'anonymous', method: 'GET', path: KEYS, status: 401, contains: { error: 'unauthorized' } }],
  )
})

describe('a key as a Bearer credential', () => {
  it('works for what its capabilities and its creator allow, and is 403 for the rest', async () => {
    const key = await createKey(admin.token, ['system/users:read'])
    const users = await get('/api/v1/users', key.raw)
    expect(users.status, users.text).toBe(200)
    expect((users.body.data as any[]).map((u) => u.id)).toContain(admin.id)
    // The creator holds these, the key does not.
    for (const path of ['/api/v1/roles', '/api/v1/settings', '/api/v1/audit-log']) {
      const reply = await get(path, key.raw)
      expect(reply.status, path).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    const write = await server.request('PATCH', `/api/v1/users/${editor.id}`, {
      token: key.raw,
      body: { name: 'by key' },
    })
    expect(write.status).toBe(403)
    expect((await get(`/api/v1/users/${editor.id}`, admin.token)).body.data.name).toBe('editor')
  })

  it("a super_admin's key is still bounded by its capabilities", async () => {
    const key = await createKey(owner.token, ['system/settings:read'])
    expect((await get('/api/v1/settings', key.raw)).status).toBe(200)
    expect((await get('/api/v1/users', key.raw)).status).toBe(403)
    expect((await get('/api/v1/projects', key.raw)).status).toBe(403)
    const patched = await server.request('PATCH', '/api/v1/settings', {
      token: key.raw,
      body: { 'ai.mcp_rate_limit': 5 },
    })
    expect(patched.status).toBe(403)
    expect((await get('/api/v1/settings', owner.token)).body.data['ai.mcp_rate_limit']).toBe(100)
  })

  it("follows the creator's permissions as they change", async () => {
    const creator = await accountWith([
      { resource: 'system/settings', action: 'read' },
      { resource: 'system/roles', action: 'read' },
    ])
    const key = await createKey(creator.token, ['system/settings:read'])
    expect((await get('/api/v1/settings', key.raw)).status).toBe(200)
    // The creator may read roles, the key may not.
    expect((await get('/api/v1/roles', creator.token)).status).toBe(200)
    expect((await get('/api/v1/roles', key.raw)).status).toBe(403)
    // Taking the grant from the creator's role takes it from the key, at once.
    await setGrants(server, owner.token, creator.roleName, [{ resource: 'system/roles', action: 'read' }])
    expect((await get('/api/v1/settings', key.raw)).status).toBe(403)
    // So does moving the creator to another role.
    await setGrants(server, owner.token, creator.roleName, [{ resource: 'system/settings', action: 'read' }])
    expect((await get('/api/v1/settings', key.raw)).status).toBe(200)
    const moved = await server.request('PATCH', `/api/v1/users/${creator.id}`, {
      token: owner.token,
      body: { role: 'viewer' },
    })
    expect(moved.status, moved.text).toBe(200)
    expect((await get('/api/v1/settings', key.raw)).status).toBe(403)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'an unknown sk- key is 401',
        method: 'GET',
        path: '/api/v1/users',
        as: 'sk-not-a-real-key',
        status: 401,
        contains: { error: 'unauthorized' },
      },
    ],
  )
})

describe('expiry', () => {
  it('a key stops working once its expires_at passes', async () => {
    const expires = nowSeconds() + 2
    const key = await createKey(admin.token, ['system/users:read'], { expires_at: expires })
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    await clock.advance(1_999)
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    await clock.advance(1)
    const after = await get('/api/v1/users', key.raw)
    expect(after.status).toBe(401)
    expect(after.body.error).toBe('unauthorized')
  })
})

describe('DELETE /api/auth/api-keys/:id', () => {
  it('revokes: 401 on the very next request, gone from the list, then 404', async () => {
    const key = await createKey(admin.token, ['system/users:read'])
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    const reply = await server.request('DELETE', `${KEYS}/${key.id}`, { token: admin.token })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    const after = await get('/api/v1/users', key.raw)
    expect(after.status).toBe(401)
    expect(after.body.error).toBe('unauthorized')
    expect((await listKeys(admin.token)).map((k) => k.id)).not.toContain(key.id)
    const again = await server.request('DELETE', `${KEYS}/${key.id}`, { token: admin.token })
    expect(again.status).toBe(404)
    expect(again.body.error).toBe('not_found')
  })

  it('the creator revokes their own key', async () => {
    const key = await createKey(editor.token, [])
    expect((await server.request('DELETE', `${KEYS}/${key.id}`, { token: editor.token })).status).toBe(200)
    expect((await listKeys(editor.token)).map((k) => k.id)).not.toContain(key.id)
  })

  it("a non-admin revoking another user's key gets 404, and the key keeps working", async () => {
    const key = await createKey(admin.token, ['system/users:read'])
    const reply = await server.request('DELETE', `${KEYS}/${key.id}`, { token: editor.token })
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('not_found')
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    expect((await listKeys(admin.token)).map((k) => k.id)).toContain(key.id)
  })

  it("an admin revokes another user's key", async () => {
    const key = await createKey(owner.token, ['system/users:read'])
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    const reply = await server.request('DELETE', `${KEYS}/${key.id}`, { token: admin.token })
    expect(reply.status, reply.text).toBe(200)
    expect((await get('/api/v1/users', key.raw)).status).toBe(401)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown id',
        method: 'DELETE',
        path: `${KEYS}/nope`,
        as: () => admin.token,
        status: 404,
        contains: { error: 'not_found' },
      },
      { name: 'anonymous', method: 'DELETE', path: `${KEYS}/nope`, status: 401, contains: { error: 'unauthorized' } },
    ],
  )
})

describe('service keys', () => {
  it('only a super_admin may create one (403 for an admin)', async () => {
    const reply = await server.request('POST', KEYS, {
      token: admin.token,
      body: { label: 'svc', capabilities: ['system/users:read'], service: true },
    })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect((await listKeys(admin.token)).some((k) => k.label === 'svc')).toBe(false)
  })

  it('is bound to no user and works with its capabilities alone', async () => {
    const key = await createKey(owner.token, ['system/users:read', 'system/settings:update'], { service: true })
    const listed = (await listKeys(admin.token)).find((k) => k.id === key.id)
    expect(listed.user_id).toBeNull()
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    const patched = await server.request('PATCH', '/api/v1/settings', {
      token: key.raw,
      body: { 'ai.mcp_rate_limit': 250 },
    })
    expect(patched.status, patched.text).toBe(200)
    expect((await get('/api/v1/settings', owner.token)).body.data['ai.mcp_rate_limit']).toBe(250)
    // Not a capability: refused, whatever its creator could do.
    expect((await get('/api/v1/settings', key.raw)).status).toBe(403)
    expect((await get('/api/v1/roles', key.raw)).status).toBe(403)
    expect((await get('/api/v1/projects', key.raw)).status).toBe(403)
    // Its creator's session ending does not end it.
    expect(
      (await server.request('POST', '/api/auth/sign-out', { token: (await signInAgain(owner)).token })).status,
    ).toBe(200)
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    await server.request('PATCH', '/api/v1/settings', { token: owner.token, body: { 'ai.mcp_rate_limit': 100 } })
  })
})

async function signInAgain(account: Account): Promise<{ token: string }> {
  const reply = await server.request('POST', '/api/auth/sign-in/email', {
    body: { email: account.email, password: account.password },
  })
  expect(reply.status, reply.text).toBe(200)
  return { token: reply.body.token }
}

describe('keys cannot create keys', () => {
  it("POST with a key as the credential is 403, even for a super_admin's key", async () => {
    for (const key of [
      await createKey(owner.token, ['system/users:read']),
      await createKey(owner.token, ['*:manage'], { service: true }),
    ]) {
      const reply = await server.request('POST', KEYS, { token: key.raw, body: { label: 'child', capabilities: [] } })
      expect(reply.status).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    expect((await listKeys(admin.token)).some((k) => k.label === 'child')).toBe(false)
  })

  it('nor list or revoke them: 403, and the target key keeps working', async () => {
    const target = await createKey(owner.token, ['system/users:read'])
    for (const key of [
      await createKey(owner.token, ['system/users:read']),
      await createKey(owner.token, ['*:manage'], { service: true }),
    ]) {
      const list = await get(KEYS, key.raw)
      expect(list.status).toBe(403)
      expect(list.text).not.toContain(target.id)
      const revoke = await server.request('DELETE', `${KEYS}/${target.id}`, { token: key.raw })
      expect(revoke.status).toBe(403)
    }
    expect((await get('/api/v1/users', target.raw)).status).toBe(200)
  })
})

describe("the creator's account", () => {
  it("a ban stops the creator's keys (401)", async () => {
    const creator = await createAccount(server, owner.token, { role: 'admin' })
    const key = await createKey(creator.token, ['system/users:read'])
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    const ban = await server.request('PATCH', `/api/v1/users/${creator.id}`, {
      token: owner.token,
      body: { banned: true },
    })
    expect(ban.status, ban.text).toBe(200)
    const after = await get('/api/v1/users', key.raw)
    expect(after.status).toBe(401)
    expect(after.body.error).toBe('unauthorized')
  })

  it('deleting the creator deletes their keys', async () => {
    const creator = await createAccount(server, owner.token, { role: 'admin' })
    const key = await createKey(creator.token, ['system/users:read'])
    expect((await get('/api/v1/users', key.raw)).status).toBe(200)
    expect((await server.request('DELETE', `/api/v1/users/${creator.id}`, { token: owner.token })).status).toBe(200)
    expect((await get('/api/v1/users', key.raw)).status).toBe(401)
    expect((await listKeys(admin.token)).map((k) => k.id)).not.toContain(key.id)
  })
})

describe('keys in another project', () => {
  let there: Record<string, string>
  beforeAll(async () => {
    const project = await server.request('POST', '/api/v1/projects', {
      token: owner.token,
      body: { name: 'Keys project' },
    })
    expect(project.status, project.text).toBe(201)
    there = { 'X-Project-Id': project.body.data.id as string }
  })

  it("a super_admin's key made while acting in another project works there with X-Project-Id", async () => {
    const created = await server.request('POST', KEYS, {
      token: owner.token,
      headers: there,
      body: { label: 'there', capabilities: ['system/roles:read'] },
    })
    expect(created.status, created.text).toBe(201)
    const raw = created.body.raw as string
    const roles = await get('/api/v1/roles', raw, there)
    expect(roles.status, roles.text).toBe(200)
    const ownerSeesThere = await get('/api/v1/roles', owner.token, there)
    expect((roles.body.data as any[]).map((r) => r.id).sort()).toEqual(
      (ownerSeesThere.body.data as any[]).map((r) => r.id).sort(),
    )
    // Bound to the owner, it belongs to the owner's project, as the owner's sessions do.
    const home = await get('/api/v1/roles', raw)
    expect(home.status, home.text).toBe(200)
    expect(home.body.data.map((r: any) => r.id)).not.toEqual(roles.body.data.map((r: any) => r.id))
    expect((await listKeys(owner.token)).map((k) => k.id)).toContain(created.body.id)
  })

  it('a service key made there belongs there', async () => {
    const created = await server.request('POST', KEYS, {
      token: owner.token,
      headers: there,
      body: { label: 'svc there', capabilities: ['system/roles:read'], service: true },
    })
    expect(created.status, created.text).toBe(201)
    const roles = await get('/api/v1/roles', created.body.raw)
    expect(roles.status, roles.text).toBe(200)
    const ownerSeesThere = await get('/api/v1/roles', owner.token, there)
    expect((roles.body.data as any[]).map((r) => r.id).sort()).toEqual(
      (ownerSeesThere.body.data as any[]).map((r) => r.id).sort(),
    )
    const listedThere = await get(KEYS, owner.token, there)
    expect((listedThere.body as any[]).map((k) => k.id)).toContain(created.body.id)
    expect((await listKeys(owner.token)).map((k) => k.id)).not.toContain(created.body.id)
  })

  it('a key of a non-super_admin cannot reach another project (403)', async () => {
    const key = await createKey(admin.token, ['system/roles:read'])
    const reply = await get('/api/v1/roles', key.raw, there)
    expect(reply.status).toBe(403)
    expect(reply.body.error).toBe('forbidden')
  })
})
