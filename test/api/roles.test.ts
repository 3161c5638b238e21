import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, roleId, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { routePermissions } from '../support/route-table.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
let owner: Account
let admin: Account
let viewer: Account
let editorId: string
let viewerId: string
let adminId: string
let superAdminId: string
let publicId: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  editorId = await roleId(server, owner.token, 'editor')
  viewerId = await roleId(server, owner.token, 'viewer')
  adminId = await roleId(server, owner.token, 'admin')
  superAdminId = await roleId(server, owner.token, 'super_admin')
  publicId = await roleId(server, owner.token, 'public')
})
afterAll(async () => {
  await server?.stop()
})

const get = (path: string, token: string) => server.request('GET', path, { token })
const put = (path: string, token: string, body: unknown) => server.request('PUT', path, { token, body })
const post = (path: string, token: string, body: unknown) => server.request('POST', path, { token, body })
const patch = (path: string, token: string, body: unknown) => server.request('PATCH', path, { token, body })
const del = (path: string, token: string) => server.request('DELETE', path, { token })

let seq = 0
const freshName = (prefix = 'role') => `${prefix}_${Date.now().toString(36)}_${seq++}`

async function createRole(
  name = freshName(),
  body: Record<string, unknown> = {},
  token = owner.token,
): Promise<{ id: string; name: string }> {
  const reply = await post('/api/v1/roles', token, { name, ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

async function grantsOf(id: string): Promise<unknown[]> {
  const reply = await get(`/api/v1/roles/${id}/grants`, owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

const byKey = (grants: any[]) =>
  [...grants].sort((a, b) => `${a.resource}:${a.action}`.localeCompare(`${b.resource}:${b.action}`))

describe('GET /api/v1/roles', () => {
  it('lists the six built-in roles with their admin access', async () => {
    const reply = await get('/api/v1/roles', owner.token)
    expect(reply.status).toBe(200)
    const builtIns = (reply.body.data as any[]).filter((r) => r.builtIn)
    const summary = Object.fromEntries(builtIns.map((r) => [r.name, r.adminAccess]))
    expect(summary).toEqual({ super_admin: true, admin: true, editor: false, viewer: false, api: false, public: false })
    for (const role of builtIns) {
      expect(role).toEqual({
        id: expect.any(String),
        name: role.name,
        description: expect.any(String),
        adminAccess: role.adminAccess,
        builtIn: true,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      })
    }
    expect(new Set(builtIns.map((r) => r.id)).size).toBe(6)
  })

  it('an admin may list roles too', async () => {
    const reply = await get('/api/v1/roles', admin.token)
    expect(reply.status).toBe(200)
    expect((reply.body.data as any[]).map((r) => r.name)).toEqual(
      expect.arrayContaining(['super_admin', 'admin', 'editor', 'viewer', 'api', 'public']),
    )
  })
})

describe('POST /api/v1/roles', () => {
  it('creates a custom role (201) that the list then shows', async () => {
    const name = freshName('reviewer')
    const reply = await post('/api/v1/roles', owner.token, { name, description: 'Reviews drafts' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toEqual({
      data: {
        id: expect.any(String),
        name,
        description: 'Reviews drafts',
        adminAccess: false,
        builtIn: false,
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      },
    })
    const list = await get('/api/v1/roles', owner.token)
    expect(list.body.data).toContainEqual(reply.body.data)
    expect(await grantsOf(reply.body.data.id)).toEqual([])
  })

  it('an admin creates a role with admin access', async () => {
    const reply = await post('/api/v1/roles', admin.token, { name: freshName('chief'), adminAccess: true })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data).toMatchObject({ adminAccess: true, builtIn: false, description: '' })
  })

  describe('refusals', () => {
    runScenarios(
      () => server,
      [
        {
          name: 'upper-case name',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: 'Reviewer' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'name with a space',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: 'my role' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'name starting with a digit',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: '1role' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'one-character name',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: 'r' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'name over 50 characters',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: `r${'x'.repeat(50)}` },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'no name',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { description: 'x' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'adminAccess not a boolean',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: 'fine_name', adminAccess: 'yes' },
          status: 400,
          contains: { error: 'invalid_request' },
        },
        {
          name: 'a built-in name',
          method: 'POST',
          path: '/api/v1/roles',
          as: () => owner.token,
          body: { name: 'editor' },
          status: 409,
          contains: { error: 'already_exists' },
        },
      ],
    )

    it('a duplicate name is 409 already_exists and creates nothing', async () => {
      const name = freshName('dup')
      await createRole(name)
      const again = await post('/api/v1/roles', owner.token, { name, description: 'second' })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ error: 'already_exists', details: { fields: ['name'] } })
      const list = await get('/api/v1/roles', owner.token)
      expect((list.body.data as any[]).filter((r) => r.name === name)).toHaveLength(1)
    })

    it('an invalid name creates nothing', async () => {
      const before = (await get('/api/v1/roles', owner.token)).body.data.length
      await post('/api/v1/roles', owner.token, { name: 'Bad Name' })
      expect((await get('/api/v1/roles', owner.token)).body.data).toHaveLength(before)
    })
  })
})

describe('PATCH /api/v1/roles/:id', () => {
  it('renames and redescribes a custom role', async () => {
    const role = await createRole()
    const name = freshName('renamed')
    const reply = await patch(`/api/v1/roles/${role.id}`, owner.token, { name, description: 'new words' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ id: role.id, name, description: 'new words', builtIn: false })
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === role.id)).toMatchObject({ name, description: 'new words' })
    expect(list.some((r) => r.name === role.name)).toBe(false)
  })

  it('a built-in role cannot be renamed (400) and keeps its name', async () => {
    const reply = await patch(`/api/v1/roles/${editorId}`, owner.token, { name: 'writer' })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === editorId).name).toBe('editor')
    expect(list.some((r) => r.name === 'writer')).toBe(false)
  })

  it('the admin access of a built-in role cannot change (400)', async () => {
    const reply = await patch(`/api/v1/roles/${viewerId}`, owner.token, { adminAccess: true })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === viewerId).adminAccess).toBe(false)
  })

  it('a built-in role may be redescribed; sending its own name is no rename', async () => {
    const reply = await patch(`/api/v1/roles/${viewerId}`, owner.token, {
      name: 'viewer',
      description: 'Looks, never touches',
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ name: 'viewer', description: 'Looks, never touches', builtIn: true })
  })

  it('renaming onto a taken name is 409', async () => {
    const a = await createRole()
    const b = await createRole()
    const reply = await patch(`/api/v1/roles/${b.id}`, owner.token, { name: a.name })
    expect(reply.status).toBe(409)
    expect(reply.body.error).toBe('already_exists')
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === b.id).name).toBe(b.name)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown role',
        method: 'PATCH',
        path: '/api/v1/roles/nope',
        as: () => owner.token,
        body: { description: 'x' },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'bad new name',
        method: 'PATCH',
        path: '/api/v1/roles/nope',
        as: () => owner.token,
        body: { name: 'Not OK' },
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('DELETE /api/v1/roles/:id', () => {
  it('deletes a custom role, grants and all', async () => {
    const role = await createRole()
    await setGrants(server, owner.token, role.name, [{ resource: 'collections/*', action: 'read' }])
    const reply = await del(`/api/v1/roles/${role.id}`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.some((r) => r.id === role.id)).toBe(false)
    expect((await get(`/api/v1/roles/${role.id}/grants`, owner.token)).status).toBe(404)
    expect((await del(`/api/v1/roles/${role.id}`, owner.token)).status).toBe(404)
  })

  it('a built-in role cannot be deleted (400)', async () => {
    for (const id of [editorId, viewerId, adminId, superAdminId, publicId]) {
      const reply = await del(`/api/v1/roles/${id}`, owner.token)
      expect(reply.status, id).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
    const names = ((await get('/api/v1/roles', owner.token)).body.data as any[]).map((r) => r.name)
    expect(names).toEqual(expect.arrayContaining(['super_admin', 'admin', 'editor', 'viewer', 'api', 'public']))
  })

  it('a role assigned to a user is 409 conflict and stays', async () => {
    const role = await createRole()
    const member = await createAccount(server, owner.token, { role: role.name })
    const reply = await del(`/api/v1/roles/${role.id}`, owner.token)
    expect(reply.status).toBe(409)
    expect(reply.body.error).toBe('conflict')
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.some((r) => r.id === role.id)).toBe(true)
    // Once nobody holds it, it can go.
    expect((await patch(`/api/v1/users/${member.id}`, owner.token, { role: 'viewer' })).status).toBe(200)
    expect((await del(`/api/v1/roles/${role.id}`, owner.token)).status).toBe(200)
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown role',
        method: 'DELETE',
        path: '/api/v1/roles/nope',
        as: () => owner.token,
        status: 404,
        contains: { error: 'not_found' },
      },
    ],
  )
})

describe('GET /api/v1/roles/:id/grants', () => {
  it("the editor's defaults are exactly those of addendum §3", async () => {
    const mine = { uploadedBy: { _eq: '$CURRENT_USER' } }
    expect(byKey(await grantsOf(editorId))).toEqual(
      byKey([
        { resource: 'collections/*', action: 'read', item_filter: null, fields: null },
        { resource: 'collections/*', action: 'create', item_filter: null, fields: null },
        { resource: 'collections/*', action: 'update', item_filter: null, fields: null },
        { resource: 'collections/*', action: 'delete', item_filter: null, fields: null },
        { resource: 'system/files', action: 'read', item_filter: null, fields: null },
        { resource: 'system/files', action: 'create', item_filter: null, fields: null },
        { resource: 'system/files', action: 'update', item_filter: mine, fields: null },
        { resource: 'system/files', action: 'delete', item_filter: mine, fields: null },
        { resource: 'system/automate', action: 'read', item_filter: null, fields: null },
        { resource: 'system/automate', action: 'execute', item_filter: null, fields: null },
        // The shared menu (decision 064).
        { resource: 'system/navigation', action: 'read', item_filter: null, fields: null },
        { resource: 'system/navigation', action: 'create', item_filter: null, fields: null },
        { resource: 'system/navigation', action: 'update', item_filter: null, fields: null },
        { resource: 'system/navigation', action: 'delete', item_filter: null, fields: null },
        // Builder resources (issue 29, decision 065).
        ...['system/renderers', 'system/lens-attachments'].flatMap((resource) =>
          ['read', 'create', 'update', 'delete'].map((action) => ({
            resource,
            action,
            item_filter: null,
            fields: null,
          })),
        ),
        { resource: 'system/views', action: 'read', item_filter: null, fields: null },
        { resource: 'system/views', action: 'create', item_filter: null, fields: null },
        { resource: 'system/views', action: 'update', item_filter: null, fields: null },
        { resource: 'system/views', action: 'delete', item_filter: null, fields: null },
        // File containers (decision 066): read; managing them is the admin's.
        { resource: 'system/containers', action: 'read', item_filter: null, fields: null },
        // Blueprint plans (issue 30, decision 069).
        { resource: 'system/blueprints', action: 'read', item_filter: null, fields: null },
      ]),
    )
  })

  it("the viewer's defaults are collections/* and system/files read, navigation, renderers, lens attachments and containers read, and personal views (decision 063)", async () => {
    expect(byKey(await grantsOf(viewerId))).toEqual(
      byKey([
        { resource: 'collections/*', action: 'read', item_filter: null, fields: null },
        { resource: 'system/files', action: 'read', item_filter: null, fields: null },
        { resource: 'system/navigation', action: 'read', item_filter: null, fields: null },
        { resource: 'system/renderers', action: 'read', item_filter: null, fields: null },
        { resource: 'system/lens-attachments', action: 'read', item_filter: null, fields: null },
        { resource: 'system/views', action: 'read', item_filter: null, fields: null },
        { resource: 'system/views', action: 'create', item_filter: null, fields: null },
        { resource: 'system/containers', action: 'read', item_filter: null, fields: null },
      ]),
    )
  })

  it('api, public, admin and super_admin hold no grants by default', async () => {
    for (const name of ['api', 'public', 'admin', 'super_admin']) {
      expect(await grantsOf(await roleId(server, owner.token, name)), name).toEqual([])
    }
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown role',
        method: 'GET',
        path: '/api/v1/roles/nope/grants',
        as: () => owner.token,
        status: 404,
        contains: { error: 'not_found' },
      },
    ],
  )
})

describe('PUT /api/v1/roles/:id/grants', () => {
  it('replaces the grants; GET then shows exactly them, in order', async () => {
    const role = await createRole()
    const first = [
      {
        resource: 'collections/articles',
        action: 'read',
        item_filter: { status: { _eq: 'published' } },
        fields: ['title', 'body'],
      },
      { resource: 'collections/*', action: 'write', item_filter: null, fields: null },
    ]
    const reply = await put(`/api/v1/roles/${role.id}/grants`, owner.token, { grants: first })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ data: first })
    expect(await grantsOf(role.id)).toEqual(first)

    const second = [{ resource: 'schema/*', action: 'manage', item_filter: null, fields: null }]
    expect((await put(`/api/v1/roles/${role.id}/grants`, owner.token, { grants: second })).status).toBe(200)
    expect(await grantsOf(role.id)).toEqual(second)

    expect((await put(`/api/v1/roles/${role.id}/grants`, owner.token, { grants: [] })).status).toBe(200)
    expect(await grantsOf(role.id)).toEqual([])
  })

  it('omitted item_filter and fields read back as null', async () => {
    const role = await createRole()
    const reply = await put(`/api/v1/roles/${role.id}/grants`, owner.token, {
      grants: [{ resource: '*', action: 'read' }],
    })
    expect(reply.status, reply.text).toBe(200)
    expect(await grantsOf(role.id)).toEqual([{ resource: '*', action: 'read', item_filter: null, fields: null }])
  })

  it('keeps every dynamic variable of an item_filter as sent', async () => {
    const role = await createRole()
    const filter = {
      _or: [{ owner: { _eq: '$CURRENT_USER' } }, { audience: { _in: ['$CURRENT_ROLE', 'all'] } }],
      day: { _lte: '$NOW_DATE' },
    }
    const grants = [{ resource: 'collections/notes', action: 'read', item_filter: filter, fields: null }]
    expect((await put(`/api/v1/roles/${role.id}/grants`, owner.token, { grants })).status).toBe(200)
    expect(await grantsOf(role.id)).toEqual(grants)
  })

  describe('a refused grant list writes nothing', () => {
    const kept = [{ resource: 'collections/kept', action: 'read', item_filter: null, fields: null }]
    let id: string
    beforeAll(async () => {
      const role = await createRole()
      id = role.id
      expect((await put(`/api/v1/roles/${id}/grants`, owner.token, { grants: kept })).status).toBe(200)
    })

    const good = { resource: 'collections/articles', action: 'read' }
    const rows: { name: string; grants: unknown; status: number; error: string }[] = [
      {
        name: 'bad resource',
        grants: [good, { resource: 'Collections/X', action: 'read' }],
        status: 400,
        error: 'invalid_request',
      },
      {
        name: 'resource with a partial wildcard',
        grants: [good, { resource: 'collections/art*', action: 'read' }],
        status: 400,
        error: 'invalid_request',
      },
      { name: 'empty resource', grants: [{ resource: '', action: 'read' }], status: 400, error: 'invalid_request' },
      {
        name: 'unknown action',
        grants: [good, { resource: 'collections/articles', action: 'fly' }],
        status: 400,
        error: 'invalid_request',
      },
      { name: 'missing action', grants: [{ resource: 'collections/articles' }], status: 400, error: 'invalid_request' },
      {
        name: 'bad field name',
        grants: [{ ...good, fields: ['ok', 'not ok!'] }],
        status: 400,
        error: 'invalid_request',
      },
      { name: 'fields not a list', grants: [{ ...good, fields: 'title' }], status: 400, error: 'invalid_request' },
      {
        name: 'grants not a list',
        grants: { resource: 'collections/articles', action: 'read' },
        status: 400,
        error: 'invalid_request',
      },
      {
        name: 'unknown filter operator',
        grants: [good, { ...good, item_filter: { status: { _bogus: 1 } } }],
        status: 422,
        error: 'validation_error',
      },
      {
        name: 'filter of the wrong type',
        grants: [{ ...good, item_filter: 42 }],
        status: 422,
        error: 'validation_error',
      },
      {
        name: 'filter as broken JSON text',
        grants: [{ ...good, item_filter: '{"status":' }],
        status: 422,
        error: 'validation_error',
      },
      {
        name: 'unknown variable',
        grants: [{ ...good, item_filter: { owner: { _eq: '$SOMEONE' } } }],
        status: 422,
        error: 'validation_error',
      },
    ]
    it.each(rows)('$name → $status $error', async ({ grants, status, error }) => {
      const reply = await put(`/api/v1/roles/${id}/grants`, owner.token, { grants })
      expect(reply.status, reply.text).toBe(status)
      expect(reply.body).toMatchObject({ error, message: expect.any(String), details: expect.any(Object) })
      expect(await grantsOf(id)).toEqual(kept)
    })

    it('the 422 names the grant at fault', async () => {
      const reply = await put(`/api/v1/roles/${id}/grants`, owner.token, {
        grants: [good, { ...good, item_filter: { status: { _bogus: 1 } } }],
      })
      expect(reply.status).toBe(422)
      expect(reply.body.details).toMatchObject({ index: 1 })
      expect(reply.body.message).toContain('grants[1]')
    })
  })

  // Decision 012: a grant on `books` could never match a request, just as a key capability could not.
  it.each(['books', 'system/books', 'schema/articles', 'collections/a/b', 'instance/tenants'])(
    'a grant on %s, a resource Plinth does not know, is 400 naming it',
    async (resource) => {
      const role = await createRole()
      const reply = await put(`/api/v1/roles/${role.id}/grants`, owner.token, {
        grants: [
          { resource: 'collections/*', action: 'read' },
          { resource, action: 'read' },
        ],
      })
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_request', details: { index: 1, resource } })
      expect(reply.body.message).toContain(`"${resource}"`)
      expect(await grantsOf(role.id)).toEqual([])
    },
  )

  it('every permission a route checks may be granted', async () => {
    const permissions = await routePermissions(server, (param) => (param === 'name' ? 'articles' : param))
    const grants = [...permissions, '*:read', 'system/*:read', 'instance/*:read'].map((p) => {
      const at = p.lastIndexOf(':')
      return { resource: p.slice(0, at), action: p.slice(at + 1), item_filter: null, fields: null }
    })
    const role = await createRole()
    const reply = await put(`/api/v1/roles/${role.id}/grants`, owner.token, { grants })
    expect(reply.status, reply.text).toBe(200)
    expect(await grantsOf(role.id)).toEqual(grants)
  })

  it('the grants of super_admin and admin cannot be edited (400)', async () => {
    for (const id of [superAdminId, adminId]) {
      const reply = await put(`/api/v1/roles/${id}/grants`, owner.token, {
        grants: [{ resource: 'collections/*', action: 'read' }],
      })
      expect(reply.status, id).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(await grantsOf(id)).toEqual([])
    }
  })

  runScenarios(
    () => server,
    [
      {
        name: 'unknown role',
        method: 'PUT',
        path: '/api/v1/roles/nope/grants',
        as: () => owner.token,
        body: { grants: [] },
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'no body',
        method: 'PUT',
        path: '/api/v1/roles/nope/grants',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})

describe('a non-admin role that manages roles', () => {
  const ownNotes = { owner: { _eq: '$CURRENT_USER' } }
  let manager: Account
  let managerRoleId: string
  beforeAll(async () => {
    const role = await createRole(freshName('manager'), { description: 'Manages roles, reads collections' })
    managerRoleId = role.id
    await setGrants(server, owner.token, role.name, [
      { resource: 'system/roles', action: 'read' },
      { resource: 'system/roles', action: 'update' },
      { resource: 'system/roles', action: 'create' },
      { resource: 'collections/*', action: 'read' },
      { resource: 'collections/notes', action: 'update', item_filter: ownNotes, fields: ['title', 'body'] },
    ])
    manager = await createAccount(server, owner.token, { role: role.name })
  })

  it('may grant what it holds', async () => {
    const target = await createRole()
    const grants = [{ resource: 'collections/articles', action: 'read', item_filter: null, fields: null }]
    const reply = await put(`/api/v1/roles/${target.id}/grants`, manager.token, { grants })
    expect(reply.status, reply.text).toBe(200)
    expect(await grantsOf(target.id)).toEqual(grants)
  })

  it('cannot grant what it lacks (403 naming it) and writes nothing', async () => {
    const target = await createRole()
    const reply = await put(`/api/v1/roles/${target.id}/grants`, manager.token, {
      grants: [
        { resource: 'collections/articles', action: 'read' },
        { resource: 'system/users', action: 'delete' },
      ],
    })
    expect(reply.status).toBe(403)
    expect(reply.body).toMatchObject({ error: 'forbidden', details: { resource: 'system/users', action: 'delete' } })
    expect(reply.body.message).toContain('system/users:delete')
    expect(await grantsOf(target.id)).toEqual([])
  })

  it('cannot widen a read into manage', async () => {
    const target = await createRole()
    const reply = await put(`/api/v1/roles/${target.id}/grants`, manager.token, {
      grants: [{ resource: 'collections/*', action: 'manage' }],
    })
    expect(reply.status).toBe(403)
    expect(await grantsOf(target.id)).toEqual([])
  })

  it('may hand out a grant it holds with a row filter, with the same filter and fewer fields', async () => {
    const target = await createRole()
    const grants = [{ resource: 'collections/notes', action: 'update', item_filter: ownNotes, fields: ['title'] }]
    const reply = await put(`/api/v1/roles/${target.id}/grants`, manager.token, { grants })
    expect(reply.status, reply.text).toBe(200)
    expect(await grantsOf(target.id)).toEqual(grants)
  })

  it.each([
    { name: 'without its row filter', grant: { fields: ['title'] } },
    { name: 'with another row filter', grant: { item_filter: { team: { _eq: 'red' } }, fields: ['title'] } },
    {
      name: 'with a column it cannot reach',
      grant: { item_filter: { owner: { _eq: '$CURRENT_USER' } }, fields: ['title', 'secret'] },
    },
    { name: 'on every column', grant: { item_filter: { owner: { _eq: '$CURRENT_USER' } } } },
  ])('cannot hand out a restricted grant $name (403) and writes nothing', async ({ grant }) => {
    const target = await createRole()
    const reply = await put(`/api/v1/roles/${target.id}/grants`, manager.token, {
      grants: [{ resource: 'collections/notes', action: 'update', ...grant }],
    })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toMatchObject({
      error: 'forbidden',
      details: { resource: 'collections/notes', action: 'update' },
    })
    expect(await grantsOf(target.id)).toEqual([])
  })

  it('cannot lift the row filter on its own role', async () => {
    const before = await grantsOf(managerRoleId)
    const widened = (before as any[]).map((g) => (g.resource === 'collections/notes' ? { ...g, item_filter: null } : g))
    const reply = await put(`/api/v1/roles/${managerRoleId}/grants`, manager.token, { grants: widened })
    expect(reply.status).toBe(403)
    expect(await grantsOf(managerRoleId)).toEqual(before)
  })

  it('cannot give its own role more', async () => {
    const reply = await put(`/api/v1/roles/${managerRoleId}/grants`, manager.token, {
      grants: [{ resource: 'system/users', action: 'read' }],
    })
    expect(reply.status).toBe(403)
    expect((await get('/api/v1/users', manager.token)).status).toBe(403)
  })

  it('cannot turn on admin access, on a new or an existing role (403)', async () => {
    const created = await post('/api/v1/roles', manager.token, { name: freshName('sneaky'), adminAccess: true })
    expect(created.status).toBe(403)
    expect(created.body.error).toBe('forbidden')
    const reply = await patch(`/api/v1/roles/${managerRoleId}`, manager.token, { adminAccess: true })
    expect(reply.status).toBe(403)
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === managerRoleId).adminAccess).toBe(false)
  })

  it('cannot edit the fixed roles either', async () => {
    const reply = await put(`/api/v1/roles/${adminId}/grants`, manager.token, { grants: [] })
    expect(reply.status).toBe(400)
  })

  it('lacks delete, so cannot delete roles (403)', async () => {
    const target = await createRole()
    const reply = await del(`/api/v1/roles/${target.id}`, manager.token)
    expect(reply.status).toBe(403)
    expect(reply.body.message).toContain('system/roles:delete')
  })
})

describe('who may call the roles endpoints', () => {
  const endpoints = (id: () => string) => [
    { method: 'GET', path: () => '/api/v1/roles', permission: 'system/roles:read' },
    { method: 'POST', path: () => '/api/v1/roles', body: { name: 'blocked_role' }, permission: 'system/roles:create' },
    {
      method: 'PATCH',
      path: () => `/api/v1/roles/${id()}`,
      body: { description: 'x' },
      permission: 'system/roles:update',
    },
    { method: 'DELETE', path: () => `/api/v1/roles/${id()}`, permission: 'system/roles:delete' },
    { method: 'GET', path: () => `/api/v1/roles/${id()}/grants`, permission: 'system/roles:read' },
    {
      method: 'PUT',
      path: () => `/api/v1/roles/${id()}/grants`,
      body: { grants: [] },
      permission: 'system/roles:update',
    },
  ]

  it.each(endpoints(() => editorId))('a viewer gets 403 on $method $permission', async (e) => {
    const reply = await server.request(e.method, e.path(), { token: viewer.token, body: e.body })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toMatchObject({ error: 'forbidden', details: {} })
    expect(reply.body.message).toContain(e.permission)
  })

  it.each(endpoints(() => editorId))('an anonymous caller gets 401 on $method $permission', async (e) => {
    const reply = await server.request(e.method, e.path(), { body: e.body })
    expect(reply.status, reply.text).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })

  it('an invalid token gets 401', async () => {
    const reply = await get('/api/v1/roles', 'not-a-session')
    expect(reply.status).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })

  it('nothing the viewer and the anonymous caller sent was applied', async () => {
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.some((r) => r.name === 'blocked_role')).toBe(false)
    expect(list.find((r) => r.id === editorId)).toMatchObject({ name: 'editor' })
    expect((await grantsOf(editorId)).length).toBe(28)
  })
})

describe('grant changes apply on the very next request', () => {
  it('a viewer reads users once granted system/users:read, and not after it is taken away', async () => {
    const defaults = await grantsOf(viewerId)
    expect((await get('/api/v1/users', viewer.token)).status).toBe(403)
    await setGrants(server, owner.token, 'viewer', [...defaults, { resource: 'system/users', action: 'read' }])
    const granted = await get('/api/v1/users', viewer.token)
    expect(granted.status, granted.text).toBe(200)
    expect((granted.body.data as any[]).map((u) => u.id)).toContain(viewer.id)
    // Reading is all it got.
    expect((await patch(`/api/v1/users/${viewer.id}`, viewer.token, { name: 'me' })).status).toBe(403)
    await setGrants(server, owner.token, 'viewer', defaults)
    expect((await get('/api/v1/users', viewer.token)).status).toBe(403)
  })

  it('an anonymous caller gains and loses a public grant at once', async () => {
    expect((await server.request('GET', '/api/v1/settings')).status).toBe(401)
    await setGrants(server, owner.token, 'public', [{ resource: 'system/settings', action: 'read' }])
    const open = await server.request('GET', '/api/v1/settings')
    expect(open.status, open.text).toBe(200)
    expect(open.body.data).toMatchObject({ 'auth.requireEmail': true })
    await setGrants(server, owner.token, 'public', [])
    expect((await server.request('GET', '/api/v1/settings')).status).toBe(401)
  })
})

// Decision 012: a role manager without admin access changes, renames or deletes only roles whose grants it
// could hand out itself, and only an administrator changes what anonymous callers (public) may do.
describe('no ladder through role editing', () => {
  let keeper: Account
  let editor: Account
  let senior: { id: string; name: string }
  let published: string
  beforeAll(async () => {
    const role = await createRole(freshName('keeper'))
    await setGrants(server, owner.token, role.name, [
      { resource: 'system/roles', action: 'read' },
      { resource: 'system/roles', action: 'update' },
      { resource: 'system/roles', action: 'delete' },
      { resource: 'system/users', action: 'read' },
      { resource: 'system/users', action: 'update' },
      { resource: 'collections/*', action: 'read' },
    ])
    keeper = await createAccount(server, owner.token, { role: role.name })
    editor = await createAccount(server, owner.token, { role: 'editor' })
    senior = await createRole(freshName('senior'))
    await setGrants(server, owner.token, senior.name, [{ resource: 'collections/*', action: 'manage' }])
    published = freshName('published')
    const made = await post('/api/v1/collections', owner.token, {
      name: published,
      fields: [{ name: 'title', type: 'text', required: false }],
    })
    expect(made.status, made.text).toBe(201)
    expect(
      (await post(`/api/v1/collections/${published}/records`, owner.token, { title: 'internal memo' })).status,
    ).toBe(201)
  })

  it("cannot empty the editor's grants (403), so a reset link for an editor stays refused", async () => {
    const before = await grantsOf(editorId)
    expect((await post(`/api/v1/users/${editor.id}/reset-link`, keeper.token, {})).status).toBe(403)

    const emptied = await put(`/api/v1/roles/${editorId}/grants`, keeper.token, { grants: [] })
    expect(emptied.status, emptied.text).toBe(403)
    expect(emptied.body).toMatchObject({ error: 'forbidden', details: { role: 'editor' } })
    expect(await grantsOf(editorId)).toEqual(before)

    const link = await post(`/api/v1/users/${editor.id}/reset-link`, keeper.token, {})
    expect(link.status, link.text).toBe(403)
    expect(link.text).not.toContain('token=')
  })

  it('cannot narrow a role above it to what it holds either (403)', async () => {
    const reply = await put(`/api/v1/roles/${senior.id}/grants`, keeper.token, {
      grants: [{ resource: 'collections/*', action: 'read' }],
    })
    expect(reply.status, reply.text).toBe(403)
    expect(await grantsOf(senior.id)).toEqual([
      { resource: 'collections/*', action: 'manage', item_filter: null, fields: null },
    ])
  })

  it('cannot rename, redescribe or delete a role above it (403); the role stays as it was', async () => {
    for (const reply of [
      await patch(`/api/v1/roles/${senior.id}`, keeper.token, { name: freshName('junior') }),
      await patch(`/api/v1/roles/${senior.id}`, keeper.token, { description: 'demoted' }),
      await patch(`/api/v1/roles/${editorId}`, keeper.token, { description: 'demoted' }),
      await del(`/api/v1/roles/${senior.id}`, keeper.token),
    ]) {
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    const list = (await get('/api/v1/roles', owner.token)).body.data as any[]
    expect(list.find((r) => r.id === senior.id)).toMatchObject({ name: senior.name, description: '' })
    expect(list.find((r) => r.id === editorId).description).not.toBe('demoted')
  })

  it('still edits, renames and deletes roles within its reach', async () => {
    const target = await createRole()
    const grants = [{ resource: 'collections/*', action: 'read', item_filter: null, fields: null }]
    expect((await put(`/api/v1/roles/${target.id}/grants`, keeper.token, { grants })).status).toBe(200)
    expect((await put(`/api/v1/roles/${target.id}/grants`, keeper.token, { grants: [] })).status).toBe(200)
    expect((await patch(`/api/v1/roles/${target.id}`, keeper.token, { description: 'tidied' })).status).toBe(200)
    expect((await del(`/api/v1/roles/${target.id}`, keeper.token)).status).toBe(200)
  })

  it('cannot give public a grant, even one it holds (403); anonymous callers still read nothing', async () => {
    const grants = [{ resource: `collections/${published}`, action: 'read' }]
    const reply = await put(`/api/v1/roles/${publicId}/grants`, keeper.token, { grants })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toMatchObject({ error: 'forbidden', details: { role: 'public' } })
    expect(await grantsOf(publicId)).toEqual([])
    const anonymous = await server.request('GET', `/api/v1/collections/${published}/records`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.text).not.toContain('internal memo')
  })

  it('an administrator may still publish a collection to public, and take it back', async () => {
    expect(
      (
        await put(`/api/v1/roles/${publicId}/grants`, admin.token, {
          grants: [{ resource: `collections/${published}`, action: 'read' }],
        })
      ).status,
    ).toBe(200)
    const anonymous = await server.request('GET', `/api/v1/collections/${published}/records`)
    expect(anonymous.status, anonymous.text).toBe(200)
    expect(anonymous.body.data.map((r: any) => r.title)).toEqual(['internal memo'])
    expect((await put(`/api/v1/roles/${publicId}/grants`, admin.token, { grants: [] })).status).toBe(200)
    expect((await server.request('GET', `/api/v1/collections/${published}/records`)).status).toBe(401)
  })
})
