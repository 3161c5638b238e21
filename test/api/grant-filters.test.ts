import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// A grant's item_filter against the schema of the collections it reaches (docs/permissions.md): refused with
// 422 when saved if it names a field the collection it names lacks; and where it cannot apply at run time
// (a wildcard grant, a collection created later) it matches no record of that collection: never a 400 to
// the caller, never a word of the grant, never more rows; an administrator finds it in the log.

let server: TestServer
let owner: Account

const call = (method: string, path: string, token?: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, body })
const records = (collection: string, query = '') => `/api/v1/collections/${collection}/records${query}`

let seq = 0
async function newRole(): Promise<string> {
  const reply = await call('POST', '/api/v1/roles', owner.token, { name: `grant_filters_${seq++}` })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id
}
const putGrants = (roleId: string, grants: unknown[]) =>
  call('PUT', `/api/v1/roles/${roleId}/grants`, owner.token, { grants })
async function grantsOf(roleId: string): Promise<unknown[]> {
  const reply = await call('GET', `/api/v1/roles/${roleId}/grants`, owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** A custom role with exactly these grants (saved with 200), and a signed-in account holding it. */
async function personWith(grants: unknown[]): Promise<Account> {
  const id = await newRole()
  const reply = await putGrants(id, grants)
  expect(reply.status, reply.text).toBe(200)
  const role = (await call('GET', '/api/v1/roles', owner.token)).body.data.find((r: { id: string }) => r.id === id)
  return createAccount(server, owner.token, { role: role.name })
}

async function createCollection(name: string, fields: unknown[]): Promise<void> {
  const reply = await call('POST', '/api/v1/collections', owner.token, { name, fields })
  expect(reply.status, reply.text).toBe(201)
}
async function seed(collection: string, values: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', records(collection), owner.token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id
}

/** Ids a list answers (200 required), sorted. */
async function listIds(token: string, collection: string, query = '?limit=100'): Promise<string[]> {
  const reply = await call('GET', records(collection, query), token)
  expect(reply.status, reply.text).toBe(200)
  expect(reply.text).not.toMatch(/nope|unknown field/i)
  return (reply.body.data as { id: string }[]).map((r) => r.id).sort()
}

const ids: Record<string, string> = {}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection('pages', [
    { name: 'title', type: 'text', required: true },
    { name: 'body', type: 'text', required: false },
  ])
  await createCollection('posts', [
    { name: 'title', type: 'text', required: true },
    { name: 'status', type: 'text', required: false },
    { name: 'views', type: 'integer', required: false },
    {
      name: 'page',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: 'pages', relationType: 'belongsTo' },
    },
    {
      name: 'page_title',
      type: 'lookup',
      required: false,
      lookupConfig: { relationField: 'page', targetField: 'title' },
    },
  ])
  ids.open = await seed('pages', { title: 'Open', body: 'open body' })
  ids.other = await seed('pages', { title: 'Other', body: 'other body' })
  ids.published = await seed('posts', { title: 'Published', status: 'published', views: 10, page: ids.open })
  ids.draft = await seed('posts', { title: 'Draft', status: 'draft', views: 0, page: ids.other })
  ids.popular = await seed('posts', { title: 'Popular', status: 'draft', views: 500 })
})
afterAll(async () => {
  await server?.stop()
})

describe('saving a grant whose item_filter does not fit the collection it names', () => {
  const read = (item_filter: unknown, resource = 'collections/posts') => ({
    resource,
    action: 'read',
    item_filter,
    fields: null,
  })
  const refused: { name: string; filter: unknown; field: string }[] = [
    { name: 'an unknown field', filter: { nope: { _eq: 1 } }, field: 'nope' },
    { name: 'an unknown field inside _or', filter: { _or: [{ status: 'draft' }, { nope: 1 }] }, field: 'nope' },
    { name: 'a path into a text field', filter: { 'title.x': 'a' }, field: 'title.x' },
    { name: 'an unknown field (array format)', filter: [{ field: 'nope', op: 'eq', value: 1 }], field: 'nope' },
    { name: 'a computed field', filter: { page_title: 'Open' }, field: 'page_title' },
    { name: 'a value of the wrong type', filter: { views: 'abc' }, field: 'views' },
    {
      name: 'a comma list item that is not a number',
      filter: [{ field: 'views', op: 'in', value: '1,x' }],
      field: 'views',
    },
  ]
  it.each(refused)('$name → 422 validation_error naming the field, nothing written', async ({ filter, field }) => {
    const role = await newRole()
    const kept = [read(null, 'collections/pages')]
    expect((await putGrants(role, kept)).status).toBe(200)
    const reply = await putGrants(role, [read({ status: 'draft' }), read(filter)])
    expect(reply.status, reply.text).toBe(422)
    expect(reply.body).toMatchObject({ error: 'validation_error', details: { index: 1 } })
    expect(reply.body.message).toContain('grants[1].item_filter')
    expect(reply.body.message).toContain(field)
    expect(await grantsOf(role)).toEqual(kept)
  })

  const accepted: { name: string; grant: unknown }[] = [
    { name: 'a filter that fits', grant: read({ status: 'published', views: { _gt: 5 } }) },
    {
      name: 'a variable of the right kind',
      grant: read({ _or: [{ created_by: '$CURRENT_USER' }, { created_at: { _lte: '$NOW' } }] }),
    },
    { name: 'a wildcard grant (checked when it applies)', grant: read({ nope: 1 }, 'collections/*') },
    { name: 'a grant on every resource', grant: read({ nope: 1 }, '*') },
    { name: 'a collection that does not exist yet', grant: read({ nope: 1 }, 'collections/not_yet') },
  ]
  it.each(accepted)('$name → 200', async ({ grant }) => {
    const reply = await putGrants(await newRole(), [grant])
    expect(reply.status, reply.text).toBe(200)
  })
})

describe('a grant filter that cannot apply to a collection matches none of its records', () => {
  let wildcard: Account
  beforeAll(async () => {
    // posts has a status; pages has none.
    wildcard = await personWith([{ resource: 'collections/*', action: 'read', item_filter: { status: 'published' } }])
  })

  it('where it applies, it filters as before', async () => {
    expect(await listIds(wildcard.token, 'posts')).toEqual([ids.published])
  })

  it('where it does not: lists (page and cursor mode) are empty, a record is 404, and nothing names the field', async () => {
    expect(await listIds(wildcard.token, 'pages')).toEqual([])
    expect(await listIds(wildcard.token, 'pages', '?cursor=&limit=100')).toEqual([])
    const one = await call('GET', records('pages', `/${ids.open}`), wildcard.token)
    expect(one.status, one.text).toBe(404)
    expect(one.body.error).toBe('record_not_found')
    expect(one.text).not.toContain('status')
  })

  it('expand and lookups into such a collection leave its records out instead of failing the list', async () => {
    const reply = await call('GET', records('posts', '?expand=page&limit=100'), wildcard.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toHaveLength(1)
    expect(reply.body.data[0]).toMatchObject({ id: ids.published, page: null, page_title: null })
    expect(reply.text).not.toContain('open body')
  })

  it('the server logs one warning per grant and collection', async () => {
    for (let i = 0; i < 3; i++) await listIds(wildcard.token, 'pages')
    const warnings = server.logs.filter(
      (line) => line.includes('item_filter cannot apply') && line.includes('collections/pages'),
    )
    expect(warnings).toHaveLength(1)
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 40,
      grant: 'collections/*:read',
      resource: 'collections/pages',
    })
  })

  it('grants OR together: the one that cannot apply adds nothing, the others still decide', async () => {
    const both = await personWith([
      { resource: 'collections/*', action: 'read', item_filter: { status: 'published' } },
      { resource: 'collections/pages', action: 'read', item_filter: { title: 'Open' } },
    ])
    expect(await listIds(both.token, 'pages')).toEqual([ids.open])
    expect(await listIds(both.token, 'posts')).toEqual([ids.published])
    const unrestricted = await personWith([
      { resource: 'collections/*', action: 'read', item_filter: { status: 'published' } },
      { resource: 'collections/pages', action: 'read' },
    ])
    expect(await listIds(unrestricted.token, 'pages')).toEqual([ids.open, ids.other].sort())
  })

  it('nor does it open its columns to the rows of other grants', async () => {
    const narrow = await personWith([
      { resource: 'collections/*', action: 'read', item_filter: { status: 'published' } },
      { resource: 'collections/pages', action: 'read', fields: ['title'] },
    ])
    const reply = await call('GET', records('pages', '?limit=100'), narrow.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toHaveLength(2)
    expect(reply.text).not.toContain('body')
  })

  it('writes through it are refused (it opens no column), not failed with a 400', async () => {
    const writer = await personWith([
      { resource: 'collections/*', action: 'create', item_filter: { status: 'published' } },
      { resource: 'collections/*', action: 'update', item_filter: { status: 'published' } },
      { resource: 'collections/pages', action: 'read' },
    ])
    const created = await call('POST', records('pages'), writer.token, { title: 'New' })
    expect(created.status, created.text).toBe(403)
    const updated = await call('PATCH', records('pages', `/${ids.open}`), writer.token, { title: 'Changed' })
    expect(updated.status, updated.text).toBe(403)
    for (const reply of [created, updated]) expect(reply.text).not.toMatch(/status|published/)
    expect(await listIds(owner.token, 'pages')).toEqual([ids.open, ids.other].sort())
    expect((await call('GET', records('pages', `/${ids.open}`), owner.token)).body.data.title).toBe('Open')
  })

  it('a grant saved before its collection existed applies the same way once it does', async () => {
    const early = await personWith([
      { resource: 'collections/later', action: 'read', item_filter: { nope: { _eq: 1 } } },
    ])
    await createCollection('later', [{ name: 'title', type: 'text', required: true }])
    await seed('later', { title: 'Later' })
    expect(await listIds(early.token, 'later')).toEqual([])
    // And saving it again now is refused.
    const role = (await call('GET', '/api/v1/roles', owner.token)).body.data.find(
      (r: { name: string }) => r.name === early.role,
    )
    const again = await putGrants(role.id, [
      { resource: 'collections/later', action: 'read', item_filter: { nope: { _eq: 1 } } },
    ])
    expect(again.status, again.text).toBe(422)
  })
})

describe('grant filters are checked and converted like a request filter', () => {
  it('a comma-separated in list of an array-format grant compares as numbers', async () => {
    const some = await personWith([
      { resource: 'collections/posts', action: 'read', item_filter: [{ field: 'views', op: 'in', value: '0,10' }] },
    ])
    expect(await listIds(some.token, 'posts')).toEqual([ids.published, ids.draft].sort())
  })
})

describe('a stored grant filter the parser refuses (saved before a limit existed, or written around the API)', () => {
  // 5,000 levels: past the 8 the parser allows, and past what JSON.stringify can write back out.
  const deep = `${'{"_and":['.repeat(5000)}{"status":{"_eq":"published"}}${']}'.repeat(5000)}`
  let person: Account
  let roleId: string

  beforeAll(async () => {
    person = await personWith([
      { resource: 'collections/posts', action: 'read', item_filter: { status: { _eq: 'published' } } },
      { resource: 'collections/pages', action: 'read' },
    ])
    roleId = (await call('GET', '/api/v1/roles', owner.token)).body.data.find(
      (r: { name: string }) => r.name === person.role,
    ).id
    await server.app.registry.system.db
      .updateTable('grants')
      .set({ item_filter: deep })
      .where('role_id', '=', roleId)
      .where('resource', '=', 'collections/posts')
      .execute()
    await newRole() // any role change reloads the project's roles
  })

  it('the project keeps working: the owner reads as before', async () => {
    expect(await listIds(owner.token, 'posts')).toEqual([ids.published, ids.draft, ids.popular].sort())
    expect((await call('GET', '/api/v1/collections', owner.token)).status).toBe(200)
  })

  it("the grant reaches no record (fail closed); the role's other grants still apply", async () => {
    expect(await listIds(person.token, 'posts')).toEqual([])
    expect(await listIds(person.token, 'pages')).toEqual([ids.open, ids.other].sort())
  })

  it('the role shows the filter as _invalid, which cannot be saved back', async () => {
    const shown = await grantsOf(roleId)
    expect(shown).toContainEqual({
      resource: 'collections/posts',
      action: 'read',
      item_filter: { _invalid: expect.stringMatching(/deeper than 8 levels/) },
      fields: null,
    })
    const again = await putGrants(roleId, shown)
    expect([400, 422], again.text).toContain(again.status)
    expect(await listIds(person.token, 'posts')).toEqual([])
  })

  it('an administrator finds it in the log', async () => {
    const warnings = server.logs.filter(
      (line) => line.includes("grant's item_filter cannot be read") && line.includes(roleId),
    )
    expect(warnings.length).toBeGreaterThan(0)
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 40,
      roleId,
      reason: expect.stringMatching(/deeper than 8 levels/),
    })
  })
})
