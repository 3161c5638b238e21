import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

// Role grants on records (core-api § Record endpoints, § Expand, § Authentication; addendum §3): custom roles
// with exact grants, callers over real HTTP, and what was stored checked through the owner (super_admin).

let server: TestServer
let owner: Account

const NOTES = '/api/v1/collections/notes/records'
const SYSTEM = ['_version', 'created_at', 'created_by', 'deleted_at', 'id', 'updated_at', 'updated_by']

const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

let seq = 0
/** A custom role with exactly these grants, and a signed-in account holding it. */
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `role_${seq++}`
  const role = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  const put = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

/** Creates a record as the owner (who may choose its id) and returns it. */
async function seed(collection: string, values: Record<string, unknown>): Promise<Record<string, any>> {
  const reply = await call('POST', `/api/v1/collections/${collection}/records`, owner.token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

/** The record as stored (deleted or not), seen by the owner; null when there is none. */
async function stored(collection: string, id: string): Promise<Record<string, any> | null> {
  const reply = await call('GET', `/api/v1/collections/${collection}/records/${id}?include_deleted=true`, owner.token)
  if (reply.status === 404) return null
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function allStored(collection: string): Promise<Record<string, any>[]> {
  const reply = await call(
    'GET',
    `/api/v1/collections/${collection}/records?limit=100&include_deleted=true`,
    owner.token,
  )
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function listIds(token: string, path = NOTES): Promise<string[]> {
  const reply = await call('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100`, token)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body.total).toBe(reply.body.data.length)
  return (reply.body.data as { id: string }[]).map((r) => r.id).sort()
}

const notFound = { error: 'record_not_found' }

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const collections = [
    {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'body', type: 'text', required: false },
        { name: 'status', type: 'text', required: false },
        { name: 'owner', type: 'text', required: false },
        { name: 'secret', type: 'text', required: false },
        { name: 'rank', type: 'integer', required: false },
      ],
    },
    {
      name: 'people',
      fields: [
        { name: 'name', type: 'text', required: true },
        { name: 'email', type: 'text', required: false },
        { name: 'team', type: 'text', required: false },
        { name: 'score', type: 'integer', required: false },
      ],
    },
    {
      name: 'tasks',
      fields: [
        { name: 'title', type: 'text', required: true },
        {
          name: 'assignee',
          type: 'relation',
          required: false,
          relationConfig: { targetCollection: 'people', relationType: 'belongsTo' },
        },
        {
          name: 'watchers',
          type: 'relation',
          required: false,
          relationConfig: { targetCollection: 'people', relationType: 'hasMany' },
        },
        {
          name: 'assignee_name',
          type: 'lookup',
          required: false,
          lookupConfig: { relationField: 'assignee', targetField: 'name' },
        },
        {
          name: 'assignee_email',
          type: 'lookup',
          required: false,
          lookupConfig: { relationField: 'assignee', targetField: 'email' },
        },
        {
          name: 'watcher_count',
          type: 'rollup',
          required: false,
          rollupConfig: { relationField: 'watchers', function: 'count' },
        },
        {
          name: 'watcher_score',
          type: 'rollup',
          required: false,
          rollupConfig: { relationField: 'watchers', function: 'sum', targetField: 'score' },
        },
      ],
    },
  ]
  for (const body of collections) {
    const reply = await call('POST', '/api/v1/collections', owner.token, body)
    expect(reply.status, reply.text).toBe(201)
  }
  // Fixed ids, so that scenario paths can name them.
  await seed('notes', { id: 'note_fixed', title: 'Fixed', secret: 'the fixed secret' })
  await seed('notes', { id: 'note_deleted', title: 'Deleted' })
  expect((await call('DELETE', `${NOTES}/note_deleted`, owner.token)).status).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

describe('no grant on the collection', () => {
  let nobody: Account
  let readOnly: Account
  beforeAll(async () => {
    // Grants on other collections only: nothing on notes.
    nobody = await personWith([
      { resource: 'collections/people', action: 'manage' },
      { resource: 'collections/note', action: 'read' },
    ])
    readOnly = await personWith([{ resource: 'collections/notes', action: 'read' }])
  })

  const forbidden = (action: string) => ({
    error: 'forbidden',
    message: expect.stringContaining(`collections/notes:${action}`),
    details: { resource: 'collections/notes', action },
  })
  const unauthorized = { error: 'unauthorized' }
  const endpoints: { method: string; path: string; action: string; body?: unknown }[] = [
    { method: 'GET', path: NOTES, action: 'read' },
    { method: 'GET', path: `${NOTES}/note_fixed`, action: 'read' },
    { method: 'GET', path: `${NOTES}/no_such_note`, action: 'read' },
    { method: 'POST', path: NOTES, action: 'create', body: { title: 'Refused' } },
    { method: 'PATCH', path: `${NOTES}/note_fixed`, action: 'update', body: { title: 'Refused' } },
    { method: 'DELETE', path: `${NOTES}/note_fixed`, action: 'delete' },
    { method: 'DELETE', path: `${NOTES}/note_fixed?permanent=true`, action: 'delete' },
    { method: 'POST', path: `${NOTES}/note_deleted/restore`, action: 'delete' },
  ]

  describe('signed in: 403 naming the permission', () => {
    runScenarios(
      () => server,
      endpoints.map((e) => ({
        name: `no grant (${e.action})`,
        method: e.method,
        path: e.path,
        body: e.body,
        as: () => nobody.token,
        status: 403,
        contains: forbidden(e.action),
        notContains: ['the fixed secret'],
      })),
    )
  })

  describe('anonymous: 401', () => {
    runScenarios(
      () => server,
      endpoints.map((e) => ({
        name: `anonymous (${e.action})`,
        method: e.method,
        path: e.path,
        body: e.body,
        status: 401,
        contains: unauthorized,
        notContains: ['the fixed secret'],
      })),
    )
  })

  describe('a read grant only covers reading', () => {
    runScenarios(
      () => server,
      endpoints
        .filter((e) => e.action !== 'read')
        .map((e) => ({
          name: `read only (${e.action})`,
          method: e.method,
          path: e.path,
          body: e.body,
          as: () => readOnly.token,
          status: 403,
          contains: forbidden(e.action),
        })),
    )
  })

  it('the refused requests changed nothing', async () => {
    // Run after the scenarios above (vitest runs a file's tests in order).
    const fixed = await stored('notes', 'note_fixed')
    expect(fixed).toMatchObject({ title: 'Fixed', _version: 1, deleted_at: null })
    expect((await stored('notes', 'note_deleted'))?.deleted_at).toEqual(expect.any(Number))
    expect((await allStored('notes')).filter((r) => r.title === 'Refused')).toEqual([])
  })

  it('the read grant reads', async () => {
    const reply = await call('GET', `${NOTES}/note_fixed`, readOnly.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ id: 'note_fixed', title: 'Fixed' })
  })

  it('an unknown collection is 404 collection_not_found for everyone', async () => {
    for (const token of [owner.token, nobody.token]) {
      const reply = await call('GET', '/api/v1/collections/ghosts/records', token)
      expect(reply.status).toBe(404)
      expect(reply.body.error).toBe('collection_not_found')
    }
  })
})

describe('item_filter with $CURRENT_USER', () => {
  const mine = { owner: { _eq: '$CURRENT_USER' } }
  let alice: Account
  let bob: Account
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    const grants = ['read', 'create', 'update', 'delete'].map((action) => ({
      resource: 'collections/notes',
      action,
      item_filter: mine,
    }))
    alice = await personWith(grants)
    bob = await personWith(grants)
    ids.alice1 = (await seed('notes', { title: 'Alice one', owner: alice.id })).id
    ids.alice2 = (await seed('notes', { title: 'Alice two', owner: alice.id })).id
    ids.bob1 = (await seed('notes', { title: 'Bob one', owner: bob.id, secret: 'bob secret' })).id
    ids.deletedBob = (await seed('notes', { title: 'Bob deleted', owner: bob.id })).id
    ids.deletedAlice = (await seed('notes', { title: 'Alice deleted', owner: alice.id })).id
    for (const id of [ids.deletedBob, ids.deletedAlice])
      expect((await call('DELETE', `${NOTES}/${id}`, owner.token)).status).toBe(200)
  })

  it('each user lists only their own rows, and total counts only those', async () => {
    expect(await listIds(alice.token)).toEqual([ids.alice1, ids.alice2].sort())
    expect(await listIds(bob.token)).toEqual([ids.bob1])
    // The owner (super_admin) is not narrowed.
    const everything = await listIds(owner.token)
    expect(everything).toEqual(expect.arrayContaining([ids.alice1, ids.alice2, ids.bob1, 'note_fixed']))
  })

  it('a request filter narrows further but never widens', async () => {
    const filter = encodeURIComponent(
      JSON.stringify({ _or: [{ owner: { _eq: bob.id } }, { title: { _eq: 'Alice one' } }] }),
    )
    expect(await listIds(alice.token, `${NOTES}?filter=${filter}`)).toEqual([ids.alice1])
  })

  it("another user's row is 404 record_not_found on get, never 403", async () => {
    const reply = await call('GET', `${NOTES}/${ids.bob1}`, alice.token)
    expect(reply.status).toBe(404)
    expect(reply.body).toMatchObject(notFound)
    expect(reply.text).not.toContain('bob secret')
    // Indistinguishable from a missing id.
    const missing = await call('GET', `${NOTES}/no_such_id`, alice.token)
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual(reply.body)
  })

  it("patching another user's row is 404 and changes nothing", async () => {
    const reply = await call('PATCH', `${NOTES}/${ids.bob1}`, alice.token, { title: 'Taken over' })
    expect(reply.status).toBe(404)
    expect(reply.body).toMatchObject(notFound)
    expect(await stored('notes', ids.bob1!)).toMatchObject({ title: 'Bob one', owner: bob.id, _version: 1 })
  })

  it("deleting another user's row is 404, soft or permanent, and it stays", async () => {
    for (const path of [`${NOTES}/${ids.bob1}`, `${NOTES}/${ids.bob1}?permanent=true`]) {
      const reply = await call('DELETE', path, alice.token)
      expect(reply.status).toBe(404)
      expect(reply.body).toMatchObject(notFound)
    }
    expect(await stored('notes', ids.bob1!)).toMatchObject({ title: 'Bob one', deleted_at: null })
  })

  it("restoring another user's deleted row is 404 and it stays deleted; one's own is restored", async () => {
    const reply = await call('POST', `${NOTES}/${ids.deletedBob}/restore`, alice.token)
    expect(reply.status).toBe(404)
    expect(reply.body).toMatchObject(notFound)
    expect((await stored('notes', ids.deletedBob!))?.deleted_at).toEqual(expect.any(Number))

    const own = await call('POST', `${NOTES}/${ids.deletedAlice}/restore`, alice.token)
    expect(own.status, own.text).toBe(200)
    expect((await stored('notes', ids.deletedAlice!))?.deleted_at).toBeNull()
  })

  it('each user updates and deletes their own rows', async () => {
    const patched = await call('PATCH', `${NOTES}/${ids.alice2}`, alice.token, { title: 'Alice two, edited' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ id: ids.alice2, title: 'Alice two, edited', _version: 2 })
    const removed = await call('DELETE', `${NOTES}/${ids.alice2}`, alice.token)
    expect(removed.status, removed.text).toBe(200)
    expect((await stored('notes', ids.alice2!))?.deleted_at).toEqual(expect.any(Number))
  })

  it('a create whose values fall outside the create filter is 403 and stores nothing', async () => {
    for (const values of [{ title: 'Planted on Bob', owner: bob.id }, { title: 'Planted without owner' }]) {
      const reply = await call('POST', NOTES, alice.token, values)
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
    }
    const titles = (await allStored('notes')).map((r) => r.title)
    expect(titles).not.toContain('Planted on Bob')
    expect(titles).not.toContain('Planted without owner')
  })

  it('a create inside the create filter is stored', async () => {
    const reply = await call('POST', NOTES, alice.token, { title: 'Alice three', owner: alice.id })
    expect(reply.status, reply.text).toBe(201)
    expect(await stored('notes', reply.body.id)).toMatchObject({
      title: 'Alice three',
      owner: alice.id,
      created_by: alice.id,
    })
  })

  it('an update that would move the row outside the update scope is 403 and changes nothing', async () => {
    const reply = await call('PATCH', `${NOTES}/${ids.alice1}`, alice.token, { owner: bob.id, title: 'Given away' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(await stored('notes', ids.alice1!)).toMatchObject({ title: 'Alice one', owner: alice.id, _version: 1 })
    expect(await listIds(bob.token)).toEqual([ids.bob1])
  })
})

describe('several grants', () => {
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    ids.open = (await seed('notes', { title: 'Open low', status: 'open', rank: 1 })).id
    ids.highClosed = (await seed('notes', { title: 'Closed high', status: 'closed', rank: 9 })).id
    ids.lowClosed = (await seed('notes', { title: 'Closed low', status: 'closed', rank: 2 })).id
  })
  const inSet = (token: string) =>
    listIds(token).then((found) => [ids.open, ids.highClosed, ids.lowClosed].filter((id) => found.includes(id!)).sort())

  it('OR their item_filters together', async () => {
    const user = await personWith([
      { resource: 'collections/notes', action: 'read', item_filter: { status: { _eq: 'open' } } },
      { resource: 'collections/notes', action: 'read', item_filter: { rank: { _gt: 5 } } },
    ])
    expect(await inSet(user.token)).toEqual([ids.open, ids.highClosed].sort())
    expect((await call('GET', `${NOTES}/${ids.lowClosed}`, user.token)).status).toBe(404)
    expect((await call('GET', `${NOTES}/${ids.highClosed}`, user.token)).status).toBe(200)
  })

  it('an unrestricted grant beside a filtered one lifts the filter', async () => {
    const user = await personWith([
      { resource: 'collections/notes', action: 'read', item_filter: { status: { _eq: 'open' } } },
      { resource: 'collections/*', action: 'read' },
    ])
    expect(await inSet(user.token)).toEqual([ids.open, ids.highClosed, ids.lowClosed].sort())
  })

  it('a filtered grant of one action does not narrow another', async () => {
    const user = await personWith([
      { resource: 'collections/notes', action: 'read' },
      { resource: 'collections/notes', action: 'update', item_filter: { status: { _eq: 'open' } } },
    ])
    expect(await inSet(user.token)).toEqual([ids.open, ids.highClosed, ids.lowClosed].sort())
    const outside = await call('PATCH', `${NOTES}/${ids.lowClosed}`, user.token, { body: 'edited' })
    expect(outside.status).toBe(404)
    expect(outside.body).toMatchObject(notFound)
    expect((await stored('notes', ids.lowClosed!))?.body).toBeNull()
    const inside = await call('PATCH', `${NOTES}/${ids.open}`, user.token, { body: 'edited' })
    expect(inside.status, inside.text).toBe(200)
    expect((await stored('notes', ids.open!))?.body).toBe('edited')
  })
})

describe('field allowlists', () => {
  let clerk: Account
  let id: string
  beforeAll(async () => {
    clerk = await personWith([
      { resource: 'collections/notes', action: 'read', fields: ['title', 'status'] },
      { resource: 'collections/notes', action: 'create', fields: ['title', 'status'] },
      { resource: 'collections/notes', action: 'update', fields: ['title'] },
    ])
    id = (
      await seed('notes', {
        title: 'Allowlisted',
        status: 'open',
        body: 'hidden body',
        secret: 'hidden secret',
        rank: 3,
      })
    ).id
  })

  it('reads omit fields outside the allowlist; system columns are always there', async () => {
    const one = await call('GET', `${NOTES}/${id}`, clerk.token)
    expect(one.status, one.text).toBe(200)
    expect(Object.keys(one.body.data).sort()).toEqual([...SYSTEM, 'status', 'title'].sort())
    expect(one.text).not.toContain('hidden')
    const list = await call('GET', `${NOTES}?limit=100`, clerk.token)
    expect(list.status).toBe(200)
    for (const record of list.body.data)
      expect(Object.keys(record).sort()).toEqual([...SYSTEM, 'status', 'title'].sort())
    expect(list.text).not.toContain('hidden')
  })

  it('fields= cannot reveal them', async () => {
    for (const path of [`${NOTES}/${id}?fields=secret,body,title`, `${NOTES}?fields=secret,body&limit=100`]) {
      const reply = await call('GET', path, clerk.token)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.text).not.toContain('hidden')
      const record =
        reply.body.data.length === undefined ? reply.body.data : reply.body.data.find((r: any) => r.id === id)
      expect(record).not.toHaveProperty('secret')
      expect(record).not.toHaveProperty('body')
    }
  })

  it('a create naming a field outside the allowlist is 403 listing it, and stores nothing', async () => {
    const reply = await call('POST', NOTES, clerk.token, { title: 'Smuggled', secret: 's', body: 'b' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect([...reply.body.details.fields].sort()).toEqual(['body', 'secret'])
    expect(reply.body.message).toContain('secret')
    expect((await allStored('notes')).map((r) => r.title)).not.toContain('Smuggled')
  })

  it('an update naming a field outside the allowlist is 403 listing it, and changes nothing', async () => {
    const reply = await call('PATCH', `${NOTES}/${id}`, clerk.token, { title: 'Changed', status: 'closed' })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body).toMatchObject({ error: 'forbidden', details: { fields: ['status'] } })
    expect(await stored('notes', id)).toMatchObject({ title: 'Allowlisted', status: 'open', _version: 1 })
  })

  it('writes inside the allowlist work and answer without hidden fields', async () => {
    const created = await call('POST', NOTES, clerk.token, { title: 'Clerk note', status: 'open' })
    expect(created.status, created.text).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual([...SYSTEM, 'status', 'title'].sort())
    const patched = await call('PATCH', `${NOTES}/${id}`, clerk.token, { title: 'Retitled' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ title: 'Retitled', _version: 2 })
    expect(patched.text).not.toContain('hidden')
    expect(await stored('notes', id)).toMatchObject({ title: 'Retitled', secret: 'hidden secret', body: 'hidden body' })
  })

  // The answer to a write is shaped by the read scope, not the write's: a field the caller may not read
  // never comes back, however wide the update grant.
  it('the answer to an update shows only the fields the caller may read', async () => {
    const writer = await personWith([
      { resource: 'collections/notes', action: 'read', fields: ['title', 'status'] },
      { resource: 'collections/notes', action: 'update' },
    ])
    const before = await call('GET', `${NOTES}/${id}`, writer.token)
    expect(before.body.data).not.toHaveProperty('secret')
    const reply = await call('PATCH', `${NOTES}/${id}`, writer.token, { status: 'reviewed' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.text).not.toContain('hidden')
    expect(Object.keys(reply.body).sort()).toEqual([...SYSTEM, 'status', 'title'].sort())
  })

  // A filter (or sort, or search) on a field outside the allowlist would probe its values: it is refused
  // (403) whatever the guess, so both requests answer alike.
  it('a filter on a field outside the allowlist does not reveal its values', async () => {
    const probe = async (value: string) => {
      const filter = encodeURIComponent(JSON.stringify({ secret: { _eq: value } }))
      const reply = await call('GET', `${NOTES}?filter=${filter}`, clerk.token)
      return {
        status: reply.status,
        ids: reply.status === 200 ? (reply.body.data as { id: string }[]).map((r) => r.id) : [],
      }
    }
    expect(await probe('hidden secret')).toEqual(await probe('a wrong guess'))
  })
})

describe('expand and computed fields follow the target collection', () => {
  const people: Record<string, string> = {}
  let taskId: string
  let blueTaskId: string
  beforeAll(async () => {
    people.red = (await seed('people', { name: 'Red Ann', email: 'ann@example.com', team: 'red', score: 5 })).id
    people.red2 = (await seed('people', { name: 'Red Ben', email: 'ben@example.com', team: 'red', score: 7 })).id
    people.blue = (await seed('people', { name: 'Blue Cy', email: 'cy@example.com', team: 'blue', score: 100 })).id
    taskId = (
      await seed('tasks', { title: 'Red task', assignee: people.red, watchers: [people.red, people.blue, people.red2] })
    ).id
    blueTaskId = (await seed('tasks', { title: 'Blue task', assignee: people.blue, watchers: [people.blue] })).id
  })
  const getTask = async (token: string, id: string, expand = 'assignee,watchers') => {
    const reply = await call('GET', `/api/v1/collections/tasks/records/${id}?expand=${expand}`, token)
    expect(reply.status, reply.text).toBe(200)
    return reply.body.data
  }

  it('with read on the target, the owner sees everything (the baseline)', async () => {
    const task = await getTask(owner.token, taskId)
    expect(task.assignee).toMatchObject({ id: people.red, name: 'Red Ann', email: 'ann@example.com' })
    expect((task.watchers as any[]).map((w) => w.id)).toEqual([people.red, people.blue, people.red2])
    expect(task).toMatchObject({
      assignee_name: 'Red Ann',
      assignee_email: 'ann@example.com',
      watcher_count: 3,
      watcher_score: 112,
    })
  })

  it('without read on the target: belongsTo is null, hasMany is [], lookups and rollups see nothing', async () => {
    const user = await personWith([{ resource: 'collections/tasks', action: 'read' }])
    const task = await getTask(user.token, taskId)
    expect(task.assignee).toBeNull()
    expect(task.watchers).toEqual([])
    expect(task.assignee_name).toBeNull()
    expect(task.watcher_count).toBe(0)
    expect(task.watcher_score).toBe(0)
    const list = await call('GET', '/api/v1/collections/tasks/records?expand=assignee,watchers&limit=100', user.token)
    expect(list.status).toBe(200)
    expect(list.text).not.toContain('example.com')
    expect(list.text).not.toContain('Red Ann')
  })

  it("target rows outside the caller's item_filter on the target are left out", async () => {
    const user = await personWith([
      { resource: 'collections/tasks', action: 'read' },
      { resource: 'collections/people', action: 'read', item_filter: { team: { _eq: 'red' } } },
    ])
    const task = await getTask(user.token, taskId)
    expect(task.assignee).toMatchObject({ id: people.red, name: 'Red Ann' })
    expect((task.watchers as any[]).map((w) => w.id)).toEqual([people.red, people.red2])
    expect(task).toMatchObject({ assignee_name: 'Red Ann', watcher_count: 2, watcher_score: 12 })
    const blue = await getTask(user.token, blueTaskId)
    expect(blue).toMatchObject({
      assignee: null,
      watchers: [],
      assignee_name: null,
      watcher_count: 0,
      watcher_score: 0,
    })
    expect(JSON.stringify(blue)).not.toContain('Blue Cy')
  })

  it("expand and lookups respect the target's field allowlist", async () => {
    const user = await personWith([
      { resource: 'collections/tasks', action: 'read' },
      { resource: 'collections/people', action: 'read', fields: ['name'] },
    ])
    const task = await getTask(user.token, taskId)
    expect(Object.keys(task.assignee).sort()).toEqual([...SYSTEM, 'name'].sort())
    for (const watcher of task.watchers) expect(watcher).not.toHaveProperty('email')
    expect(task.assignee_name).toBe('Red Ann')
    expect(task.assignee_email).toBeNull()
    // score is not readable: the sum sees no values; the count still counts the readable rows.
    expect(task.watcher_count).toBe(3)
    expect(task.watcher_score).toBe(0)
    expect(JSON.stringify(task)).not.toContain('example.com')
  })

  // A relation field the caller may not read is not expanded: absent, as without expand.
  it('expand does not show a relation field outside the allowlist of the source', async () => {
    const user = await personWith([
      { resource: 'collections/tasks', action: 'read', fields: ['title'] },
      { resource: 'collections/people', action: 'read' },
    ])
    const task = await getTask(user.token, taskId)
    expect(task).not.toHaveProperty('assignee')
    expect(task).not.toHaveProperty('watchers')
  })
})

describe('include_deleted', () => {
  let id: string
  beforeAll(async () => {
    id = (await seed('notes', { title: 'Binned' })).id
    expect((await call('DELETE', `${NOTES}/${id}`, owner.token)).status).toBe(200)
  })

  it('needs view_deleted: 403 without it, on list and get', async () => {
    const user = await personWith([{ resource: 'collections/notes', action: 'read' }])
    for (const path of [`${NOTES}?include_deleted=true`, `${NOTES}/${id}?include_deleted=true`]) {
      const reply = await call('GET', path, user.token)
      expect(reply.status, path).toBe(403)
      expect(reply.body).toMatchObject({
        error: 'forbidden',
        message: expect.stringContaining('collections/notes:view_deleted'),
      })
      expect(reply.text).not.toContain('Binned')
    }
    expect((await call('GET', `${NOTES}/${id}`, user.token)).status).toBe(404)
    expect(await listIds(user.token)).not.toContain(id)
  })

  for (const [label, grants] of [
    [
      'a view_deleted grant',
      [
        { resource: 'collections/notes', action: 'read' },
        { resource: 'collections/notes', action: 'view_deleted' },
      ],
    ],
    ['manage', [{ resource: 'collections/notes', action: 'manage' }]],
  ] as const) {
    it(`works with ${label}`, async () => {
      const user = await personWith([...grants])
      const one = await call('GET', `${NOTES}/${id}?include_deleted=true`, user.token)
      expect(one.status, one.text).toBe(200)
      expect(one.body.data).toMatchObject({ id, title: 'Binned', deleted_at: expect.any(Number) })
      const list = await call('GET', `${NOTES}?include_deleted=true&limit=100`, user.token)
      expect(list.status).toBe(200)
      expect((list.body.data as any[]).map((r) => r.id)).toContain(id)
      // Without the flag, deleted records stay out even for this caller.
      expect((await call('GET', `${NOTES}/${id}`, user.token)).status).toBe(404)
    })
  }

  it('view_deleted does not widen the read item_filter', async () => {
    const user = await personWith([
      { resource: 'collections/notes', action: 'read', item_filter: { title: { _eq: 'Something else' } } },
      { resource: 'collections/notes', action: 'view_deleted' },
    ])
    const reply = await call('GET', `${NOTES}/${id}?include_deleted=true`, user.token)
    expect(reply.status).toBe(404)
    expect(reply.body).toMatchObject(notFound)
  })
})

describe('X-Project-Id', () => {
  let there: Record<string, string>
  beforeAll(async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Elsewhere' })
    expect(project.status, project.text).toBe(201)
    there = { 'X-Project-Id': project.body.data.id }
    const created = await call(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: 'far_items', fields: [{ name: 'label', type: 'text', required: true }] },
      there,
    )
    expect(created.status, created.text).toBe(201)
    expect(created.body.data.projectId).toBe(project.body.data.id)
  })

  it("a super_admin acting in another project sees that project's collections only", async () => {
    const far = await call('GET', '/api/v1/collections', owner.token, undefined, there)
    expect(far.status, far.text).toBe(200)
    expect((far.body.data as any[]).map((c) => c.name)).toEqual(['far_items'])
    const home = await call('GET', '/api/v1/collections', owner.token)
    const homeNames = (home.body.data as any[]).map((c) => c.name)
    expect(homeNames).toEqual(expect.arrayContaining(['notes', 'people', 'tasks']))
    expect(homeNames).not.toContain('far_items')
  })

  it("records live in their project: the other project's collection is unknown at home, and the reverse", async () => {
    const created = await call(
      'POST',
      '/api/v1/collections/far_items/records',
      owner.token,
      { label: 'Far away' },
      there,
    )
    expect(created.status, created.text).toBe(201)
    const read = await call(
      'GET',
      `/api/v1/collections/far_items/records/${created.body.id}`,
      owner.token,
      undefined,
      there,
    )
    expect(read.status).toBe(200)
    expect(read.body.data).toMatchObject({ label: 'Far away' })
    const atHome = await call('GET', '/api/v1/collections/far_items/records', owner.token)
    expect(atHome.status).toBe(404)
    expect(atHome.body.error).toBe('collection_not_found')
    const notesThere = await call('GET', NOTES, owner.token, undefined, there)
    expect(notesThere.status).toBe(404)
    expect(notesThere.body.error).toBe('collection_not_found')
  })

  it("anyone else naming the other project is 403, and the home project's grants do not travel", async () => {
    const user = await personWith([{ resource: 'collections/*', action: 'manage' }])
    const reply = await call('GET', '/api/v1/collections/far_items/records', user.token, undefined, there)
    expect(reply.status).toBe(403)
    expect(reply.body.error).toBe('forbidden')
  })
})
