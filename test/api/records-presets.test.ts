import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, setGrants, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

// accessControl presets (addendum §4): team (grants alone decide), private (effective owners and admins),
// public (anonymous callers read). Checked over real HTTP; what was stored is read back by the owner.

let server: TestServer
let owner: Account
let admin: Account

const records = (name: string) => `/api/v1/collections/${name}/records`
const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

let seq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `preset_role_${seq++}`
  const role = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  const put = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

async function createCollection(name: string, accessControl?: unknown): Promise<void> {
  const body = {
    name,
    fields: [{ name: 'title', type: 'text', required: true }],
    ...(accessControl === undefined ? {} : { accessControl }),
  }
  const reply = await call('POST', '/api/v1/collections', owner.token, body)
  expect(reply.status, reply.text).toBe(201)
  expect(reply.body.data.accessControl).toEqual(accessControl ?? null)
}

async function create(name: string, token: string, values: Record<string, unknown>): Promise<Record<string, any>> {
  const reply = await call('POST', records(name), token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

async function stored(name: string, id: string): Promise<Record<string, any> | null> {
  const reply = await call('GET', `${records(name)}/${id}?include_deleted=true`, owner.token)
  if (reply.status === 404) return null
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function titles(name: string, token?: string): Promise<string[]> {
  const reply = await call('GET', `${records(name)}?limit=100`, token)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.total).toBe(reply.body.data.length)
  return (reply.body.data as { title: string }[]).map((r) => r.title).sort()
}

const crud = (name: string) => [
  { resource: `collections/${name}`, action: 'read' },
  { resource: `collections/${name}`, action: 'create' },
  { resource: `collections/${name}`, action: 'update' },
  { resource: `collections/${name}`, action: 'delete' },
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
})
afterAll(async () => {
  await server?.stop()
})

describe('team (the default): grants alone decide', () => {
  for (const [name, accessControl] of [
    ['team_default', undefined],
    ['team_explicit', { preset: 'team' }],
  ] as const) {
    it(`${name}: a reader sees everyone's records; no grant is 403; owned_by never shows`, async () => {
      await createCollection(name, accessControl)
      const alice = await personWith(crud(name))
      const bob = await personWith(crud(name))
      const reader = await personWith([{ resource: `collections/${name}`, action: 'read' }])
      const nobody = await personWith([])
      const a = await create(name, alice.token, { title: 'by alice' })
      await create(name, bob.token, { title: 'by bob' })
      expect(a).not.toHaveProperty('owned_by')

      expect(await titles(name, alice.token)).toEqual(['by alice', 'by bob'])
      expect(await titles(name, reader.token)).toEqual(['by alice', 'by bob'])
      // bob's update grant has no row scope: he may change alice's record.
      const patched = await call('PATCH', `${records(name)}/${a.id}`, bob.token, { title: 'by alice, edited by bob' })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.body).not.toHaveProperty('owned_by')
      expect((await stored(name, a.id))?.title).toBe('by alice, edited by bob')

      const refused = await call('GET', records(name), nobody.token)
      expect(refused.status).toBe(403)
      expect(refused.body.message).toContain(`collections/${name}:read`)
      expect((await call('GET', records(name))).status).toBe(401)
    })
  }
})

describe('private: only what one effectively owns', () => {
  const NAME = 'diary'
  let alice: Account
  let bob: Account
  let viewer: Account
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    await createCollection(NAME, { preset: 'private' })
    alice = await personWith(crud(NAME))
    bob = await personWith(crud(NAME))
    viewer = await createAccount(server, owner.token, { role: 'viewer' })
    ids.alice = (await create(NAME, alice.token, { title: 'alice entry' })).id
    ids.alice2 = (await create(NAME, alice.token, { title: 'alice second' })).id
    ids.bob = (await create(NAME, bob.token, { title: 'bob entry' })).id
    ids.owner = (await create(NAME, owner.token, { title: 'owner entry' })).id
  })

  it('each user with a read grant lists only their own records', async () => {
    expect(await titles(NAME, alice.token)).toEqual(['alice entry', 'alice second'])
    expect(await titles(NAME, bob.token)).toEqual(['bob entry'])
  })

  it("a read grant on everything (viewer's collections/*) still sees only its own: nothing here", async () => {
    expect(await titles(NAME, viewer.token)).toEqual([])
    const reply = await call('GET', `${records(NAME)}/${ids.alice}`, viewer.token)
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('record_not_found')
  })

  it("someone else's record is 404 record_not_found on get, patch, delete and restore, and stays as it was", async () => {
    const path = `${records(NAME)}/${ids.alice}`
    for (const [method, url, body] of [
      ['GET', path, undefined],
      ['PATCH', path, { title: 'bob was here' }],
      ['DELETE', path, undefined],
      ['DELETE', `${path}?permanent=true`, undefined],
    ] as const) {
      const reply = await call(method, url, bob.token, body)
      expect(reply.status, `${method} ${url}`).toBe(404)
      expect(reply.body.error).toBe('record_not_found')
      expect(reply.text).not.toContain('alice entry')
    }
    expect(await stored(NAME, ids.alice!)).toMatchObject({ title: 'alice entry', deleted_at: null, _version: 1 })

    // alice bins her second entry; bob cannot bring it back.
    expect((await call('DELETE', `${records(NAME)}/${ids.alice2}`, alice.token)).status).toBe(200)
    const restore = await call('POST', `${records(NAME)}/${ids.alice2}/restore`, bob.token)
    expect(restore.status).toBe(404)
    expect(restore.body.error).toBe('record_not_found')
    expect((await stored(NAME, ids.alice2!))?.deleted_at).toEqual(expect.any(Number))
    const own = await call('POST', `${records(NAME)}/${ids.alice2}/restore`, alice.token)
    expect(own.status, own.text).toBe(200)
    expect((await stored(NAME, ids.alice2!))?.deleted_at).toBeNull()
  })

  it('the owner of a record updates and deletes it', async () => {
    const made = await create(NAME, bob.token, { title: 'bob scratch' })
    const patched = await call('PATCH', `${records(NAME)}/${made.id}`, bob.token, { title: 'bob scratch, edited' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ title: 'bob scratch, edited', created_by: bob.id, owned_by: null })
    const removed = await call('DELETE', `${records(NAME)}/${made.id}?permanent=true`, bob.token)
    expect(removed.status, removed.text).toBe(200)
    expect(await stored(NAME, made.id)).toBeNull()
  })

  it('owned_by appears in responses (null: the owner is created_by), and cannot be written', async () => {
    const made = await call('POST', records(NAME), alice.token, {
      title: 'alice claims',
      owned_by: bob.id,
      created_by: bob.id,
    })
    expect(made.status, made.text).toBe(201)
    expect(made.body).toMatchObject({ owned_by: null, created_by: alice.id })
    const one = await call('GET', `${records(NAME)}/${made.body.id}`, alice.token)
    expect(one.body.data).toMatchObject({ owned_by: null, created_by: alice.id })
    const patched = await call('PATCH', `${records(NAME)}/${made.body.id}`, alice.token, { owned_by: bob.id })
    // System columns in a body are ignored (core-api § Record endpoints: set automatically).
    expect(patched.status, patched.text).toBe(200)
    expect(await stored(NAME, made.body.id)).toMatchObject({ owned_by: null, created_by: alice.id })
    // Still alice's alone.
    expect(await titles(NAME, bob.token)).not.toContain('alice claims')
    expect(await titles(NAME, alice.token)).toContain('alice claims')
  })

  it('an admin and the super_admin see every record', async () => {
    const everyone = ['alice entry', 'alice second', 'bob entry', 'owner entry']
    for (const token of [admin.token, owner.token]) {
      const seen = await titles(NAME, token)
      expect(seen).toEqual(expect.arrayContaining(everyone))
      const one = await call('GET', `${records(NAME)}/${ids.bob}`, token)
      expect(one.status).toBe(200)
      expect(one.body.data).toMatchObject({ title: 'bob entry', owned_by: null, created_by: bob.id })
    }
    const patched = await call('PATCH', `${records(NAME)}/${ids.bob}`, admin.token, { title: 'bob entry' })
    expect(patched.status, patched.text).toBe(200)
  })

  it('without a grant it is still 403, and anonymous callers 401, even with a public read grant', async () => {
    const nobody = await personWith([])
    const refused = await call('GET', records(NAME), nobody.token)
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain(`collections/${NAME}:read`)
    await setGrants(server, owner.token, 'public', [{ resource: `collections/${NAME}`, action: 'read' }])
    try {
      const anonymous = await call('GET', records(NAME))
      expect(anonymous.status).toBe(401)
      expect(anonymous.text).not.toContain('entry')
      expect((await call('GET', `${records(NAME)}/${ids.alice}`)).status).toBe(401)
    } finally {
      await setGrants(server, owner.token, 'public', [])
    }
  })

  it('a team collection switched to private narrows at once, and owned_by shows from then on, even after switching back', async () => {
    await createCollection('journal')
    const carol = await personWith(crud('journal'))
    const dave = await personWith(crud('journal'))
    const carols = await create('journal', carol.token, { title: 'carol page' })
    await create('journal', dave.token, { title: 'dave page' })
    expect(carols).not.toHaveProperty('owned_by')
    expect(await titles('journal', carol.token)).toEqual(['carol page', 'dave page'])

    const toPrivate = await call('PATCH', '/api/v1/collections/journal', owner.token, {
      fields: [{ name: 'title', type: 'text', required: true }],
      accessControl: { preset: 'private' },
    })
    expect(toPrivate.status, toPrivate.text).toBe(200)
    expect(await titles('journal', carol.token)).toEqual(['carol page'])
    expect(await titles('journal', dave.token)).toEqual(['dave page'])
    const seen = await call('GET', `${records('journal')}/${carols.id}`, carol.token)
    expect(seen.body.data).toMatchObject({ owned_by: null, created_by: carol.id })

    const toTeam = await call('PATCH', '/api/v1/collections/journal', owner.token, {
      fields: [{ name: 'title', type: 'text', required: true }],
      accessControl: { preset: 'team' },
    })
    expect(toTeam.status, toTeam.text).toBe(200)
    expect(await titles('journal', carol.token)).toEqual(['carol page', 'dave page'])
    const again = await call('GET', `${records('journal')}/${carols.id}`, dave.token)
    expect(again.status).toBe(200)
    expect(again.body.data).toHaveProperty('owned_by', null)
  })
})

describe('public: anonymous callers read', () => {
  const NAME = 'notices'
  let id: string
  let hiddenId: string
  beforeAll(async () => {
    await createCollection(NAME, { preset: 'public' })
    await createCollection('internal')
    await createCollection('secrets', { preset: 'private' })
    id = (await create(NAME, owner.token, { id: 'notice_one', title: 'Posted notice' })).id
    hiddenId = (await create('internal', owner.token, { id: 'internal_one', title: 'Internal memo' })).id
  })

  it('GET list and get work without any grant or credential', async () => {
    expect(await titles(NAME)).toEqual(['Posted notice'])
    const one = await call('GET', `${records(NAME)}/${id}`)
    expect(one.status, one.text).toBe(200)
    expect(one.body.data).toMatchObject({ id, title: 'Posted notice' })
    const nobody = await personWith([])
    expect(await titles(NAME, nobody.token)).toEqual(['Posted notice'])
  })

  it('a missing id is still 404, and a soft-deleted record is gone for anonymous callers', async () => {
    const missing = await call('GET', `${records(NAME)}/nothing_here`)
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('record_not_found')
    const gone = await create(NAME, owner.token, { title: 'Withdrawn notice' })
    expect((await call('DELETE', `${records(NAME)}/${gone.id}`, owner.token)).status).toBe(200)
    expect((await call('GET', `${records(NAME)}/${gone.id}`)).status).toBe(404)
    expect(await titles(NAME)).not.toContain('Withdrawn notice')
  })

  describe('anonymous writes are 401; signed-in writes without a grant 403', () => {
    runScenarios(
      () => server,
      [
        {
          name: 'anonymous create',
          method: 'POST',
          path: records(NAME),
          body: { title: 'Graffiti' },
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'anonymous update',
          method: 'PATCH',
          path: `${records(NAME)}/notice_one`,
          body: { title: 'Graffiti' },
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'anonymous delete',
          method: 'DELETE',
          path: `${records(NAME)}/notice_one`,
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'anonymous permanent delete',
          method: 'DELETE',
          path: `${records(NAME)}/notice_one?permanent=true`,
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'anonymous restore',
          method: 'POST',
          path: `${records(NAME)}/notice_one/restore`,
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'anonymous read of a team collection',
          method: 'GET',
          path: records('internal'),
          status: 401,
          contains: { error: 'unauthorized' },
          notContains: ['Internal memo'],
        },
        {
          name: 'anonymous get of a team record',
          method: 'GET',
          path: `${records('internal')}/internal_one`,
          status: 401,
          notContains: ['Internal memo'],
        },
        { name: 'anonymous read of a private collection', method: 'GET', path: records('secrets'), status: 401 },
      ],
    )

    it('nothing was written', async () => {
      expect(await stored(NAME, id)).toMatchObject({ title: 'Posted notice', deleted_at: null, _version: 1 })
      expect(await titles(NAME, owner.token)).not.toContain('Graffiti')
    })

    it('a signed-in caller without a grant may read but not write (403 naming the permission)', async () => {
      const nobody = await personWith([])
      const reply = await call('POST', records(NAME), nobody.token, { title: 'Graffiti' })
      expect(reply.status).toBe(403)
      expect(reply.body.message).toContain(`collections/${NAME}:create`)
      const patched = await call('PATCH', `${records(NAME)}/${id}`, nobody.token, { title: 'Graffiti' })
      expect(patched.status).toBe(403)
      expect(patched.body.message).toContain(`collections/${NAME}:update`)
      expect(await stored(NAME, id)).toMatchObject({ title: 'Posted notice', _version: 1 })
    })
  })

  it('the list of collections for anonymous callers shows the public one only', async () => {
    const reply = await call('GET', '/api/v1/collections')
    expect(reply.status, reply.text).toBe(200)
    expect((reply.body.data as any[]).map((c) => c.name)).toEqual([NAME])
    expect((await call('GET', `/api/v1/collections/${NAME}`)).status).toBe(200)
    const team = await call('GET', '/api/v1/collections/internal')
    expect(team.status).toBe(401)
    // The owner sees them all.
    const all = await call('GET', '/api/v1/collections', owner.token)
    expect((all.body.data as any[]).map((c) => c.name)).toEqual(expect.arrayContaining([NAME, 'internal', 'secrets']))
  })

  it('expanding from a public record into a collection the caller may not read gives null', async () => {
    await call('POST', '/api/v1/collections', owner.token, {
      name: 'boards',
      fields: [
        { name: 'title', type: 'text', required: true },
        {
          name: 'memo',
          type: 'relation',
          required: false,
          relationConfig: { targetCollection: 'internal', relationType: 'belongsTo' },
        },
      ],
      accessControl: { preset: 'public' },
    })
    const board = await create('boards', owner.token, { title: 'Board', memo: hiddenId })
    const anonymous = await call('GET', `${records('boards')}/${board.id}?expand=memo`)
    expect(anonymous.status, anonymous.text).toBe(200)
    expect(anonymous.body.data.memo).toBeNull()
    expect(anonymous.text).not.toContain('Internal memo')
    const asOwner = await call('GET', `${records('boards')}/${board.id}?expand=memo`, owner.token)
    expect(asOwner.body.data.memo).toMatchObject({ title: 'Internal memo' })
  })

  it("an anonymous caller naming another project reads that project's public collection, and nothing else there", async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Second site' })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    for (const [name, accessControl] of [
      ['far_notices', { preset: 'public' }],
      ['far_internal', null],
    ] as const) {
      const made = await call(
        'POST',
        '/api/v1/collections',
        owner.token,
        { name, fields: [{ name: 'title', type: 'text', required: true }], accessControl },
        there,
      )
      expect(made.status, made.text).toBe(201)
      expect((await call('POST', records(name), owner.token, { title: `${name} record` }, there)).status).toBe(201)
    }
    const list = await call('GET', records('far_notices'), undefined, undefined, there)
    expect(list.status, list.text).toBe(200)
    expect((list.body.data as any[]).map((r) => r.title)).toEqual(['far_notices record'])
    const collections = await call('GET', '/api/v1/collections', undefined, undefined, there)
    expect((collections.body.data as any[]).map((c) => c.name)).toEqual(['far_notices'])
    expect((await call('GET', records('far_internal'), undefined, undefined, there)).status).toBe(401)
    // The home project's public collection is not there: nothing there opens it to public (decision 012).
    const home = await call('GET', records(NAME), undefined, undefined, there)
    expect(home.status).toBe(401)
    expect(home.body.error).toBe('unauthorized')
  })

  // A refusal without credentials is 401 unauthorized (core-api § Errors: "Auth failure is 401"), here too.
  it('include_deleted without credentials is 401', async () => {
    const reply = await call('GET', `${records(NAME)}?include_deleted=true`)
    expect(reply.status).toBe(401)
    expect(reply.body.error).toBe('unauthorized')
  })
})
