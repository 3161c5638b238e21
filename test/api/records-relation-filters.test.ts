import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { principals } from '../../src/lib/principal.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// Filters through belongsTo relations (docs/query-language.md, decision 059): `assignee.name` follows the
// relation to the target's field, in both filter formats, up to three relations; the target's row and
// column rules apply, and a path through anything the caller may not read matches nothing, exactly as if
// the relation were null, with no error that would tell it apart.

let server: TestServer
let owner: Account
let viewer: Account
let ownerScoped: Account
let narrow: Account

const call = (method: string, path: string, token?: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, body })
const list = (token: string, filter: unknown, limit = 100) =>
  call(
    'GET',
    `/api/v1/collections/tasks/records?limit=${limit}&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    token,
  )

async function create(body: Record<string, unknown>): Promise<void> {
  const reply = await call('POST', '/api/v1/collections', owner.token, body)
  expect(reply.status, reply.text).toBe(201)
}
async function seed(collection: string, values: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', `/api/v1/collections/${collection}/records`, owner.token, values)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id
}
const belongsTo = (name: string, target: string) => ({
  name,
  type: 'relation',
  required: false,
  relationConfig: { targetCollection: target, relationType: 'belongsTo' },
})

/** The titles a list answers (200 required), sorted. */
async function titles(token: string, filter: unknown): Promise<string[]> {
  const reply = await list(token, filter)
  expect(reply.status, reply.text).toBe(200)
  return (reply.body.data as { title: string }[]).map((r) => r.title).sort()
}

async function personWith(name: string, grants: unknown[]): Promise<Account> {
  const made = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(made.status, made.text).toBe(201)
  const saved = await call('PUT', `/api/v1/roles/${made.body.data.id}/grants`, owner.token, { grants })
  expect(saved.status, saved.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await create({ name: 'regions', fields: [{ name: 'name', type: 'text', required: false }] })
  await create({
    name: 'orgs',
    fields: [{ name: 'name', type: 'text', required: false }, belongsTo('region', 'regions')],
  })
  await create({
    name: 'teams',
    fields: [
      { name: 'name', type: 'text', required: false },
      { name: 'secret', type: 'text', required: false },
      belongsTo('org', 'orgs'),
    ],
  })
  await create({
    name: 'people',
    fields: [
      { name: 'name', type: 'text', required: false },
      { name: 'salary', type: 'integer', required: false },
      { name: 'level', type: 'enum', required: false, enumValues: ['junior', 'senior'] },
      belongsTo('team', 'teams'),
    ],
  })
  await create({ name: 'kvpeople', storageType: 'kv', fields: [{ name: 'name', type: 'text', required: false }] })
  await create({
    name: 'vault',
    storageType: 'durable_object',
    fields: [{ name: 'code', type: 'text', required: false }],
  })
  await create({
    name: 'tasks',
    fields: [
      { name: 'title', type: 'text', required: false },
      belongsTo('assignee', 'people'),
      belongsTo('helper', 'kvpeople'),
      belongsTo('vault', 'vault'),
    ],
  })
  // A relation to the collection itself, added once it exists.
  const fields = (await call('GET', '/api/v1/collections/tasks', owner.token)).body.data.fields
  const patched = await call('PATCH', '/api/v1/collections/tasks', owner.token, {
    fields: [...fields, belongsTo('parent', 'tasks')],
  })
  expect(patched.status, patched.text).toBe(200)

  const region = await seed('regions', { name: 'North' })
  const org = await seed('orgs', { name: 'Acme', region })
  const alpha = await seed('teams', { name: 'Alpha', secret: 'sa', org })
  const beta = await seed('teams', { name: 'Beta', secret: 'sb' })
  const sam = await seed('people', { name: 'Sam', salary: 100, level: 'junior', team: alpha })
  const kim = await seed('people', { name: 'Kim', salary: 200, level: 'senior', team: beta })
  const ann = await seed('kvpeople', { name: 'Ann' })
  const box = await seed('vault', { code: '1234' })
  const one = await seed('tasks', { title: 'one', assignee: sam, helper: ann, vault: box })
  const two = await seed('tasks', { title: 'two', assignee: kim, parent: one })
  await seed('tasks', { title: 'four', parent: two })
  await seed('tasks', { title: 'three' })

  viewer = await personWith('relation_viewer', [
    { resource: 'collections/tasks', action: 'read' },
    // Kim is outside the viewer's row rule; salary outside its fields; teams, kvpeople and vault unreadable.
    { resource: 'collections/people', action: 'read', item_filter: { name: 'Sam' }, fields: ['name', 'team'] },
  ])
  // Teams readable, but not the relation to them.
  narrow = await personWith('relation_narrow', [
    { resource: 'collections/tasks', action: 'read' },
    { resource: 'collections/people', action: 'read', fields: ['name'] },
    { resource: 'collections/teams', action: 'read' },
  ])
  await seedKvTasks()
  ownerScoped = await personWith('relation_owner_scoped', [
    { resource: 'collections/tasks', action: 'read' },
    { resource: 'collections/people', action: 'read', item_filter: { created_by: '$CURRENT_USER' } },
  ])
})

async function seedKvTasks(): Promise<void> {
  await create({
    name: 'kvtasks',
    storageType: 'kv',
    fields: [{ name: 'title', type: 'text', required: false }, belongsTo('assignee', 'people')],
  })
  const people = (await call('GET', '/api/v1/collections/people/records?limit=10', owner.token)).body.data
  for (const person of people as { id: string; name: string }[])
    await seed('kvtasks', { title: `for ${person.name}`, assignee: person.id })
}

afterAll(async () => {
  await server?.stop()
})

describe('filters through relations (administrator)', () => {
  it.each([
    ['object format', { 'assignee.name': { _eq: 'Sam' } }, ['one']],
    ['shorthand', { 'assignee.name': 'Kim' }, ['two']],
    ['array format', [{ field: 'assignee.name', op: 'eq', value: 'Sam' }], ['one']],
    ['array format, in', [{ field: 'assignee.salary', op: 'in', value: '100,200' }], ['one', 'two']],
    ['ordered', { 'assignee.salary': { _gt: 150 } }, ['two']],
    ['negation: a null relation matches nothing', { 'assignee.name': { _neq: 'Sam' } }, ['two']],
    ['_null through a null relation matches nothing', { 'assignee.team': { _null: true } }, []],
    ['two relations', { 'assignee.team.name': 'Beta' }, ['two']],
    ['three relations', { 'assignee.team.org.name': 'Acme' }, ['one']],
    [
      'a system column of the target',
      { 'assignee.name': { _nnull: true }, 'assignee.id': { _nnull: true } },
      ['one', 'two'],
    ],
    ['to the collection itself', { 'parent.title': 'one' }, ['two']],
    ['to the collection itself, twice', { 'parent.parent.title': 'one' }, ['four']],
    ['to the collection itself, then on', { 'parent.assignee.name': 'Kim' }, ['four']],
    ['into a kv collection', { 'helper.name': 'Ann' }, ['one']],
    ['inside _or', { _or: [{ 'assignee.name': 'Kim' }, { title: 'three' }] }, ['three', 'two']],
    ['negated on a field of the target', { 'parent.title': { _neq: 'one' } }, ['four']],
  ])('%s', async (_label, filter, expected) => {
    expect(await titles(owner.token, filter)).toEqual([...expected].sort())
  })

  it('counts the filtered total and gives no ETag (the answer reads another collection)', async () => {
    const reply = await list(owner.token, { 'assignee.name': 'Sam' }, 1)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.total).toBe(1)
    expect(reply.headers.get('etag')).toBeNull()
  })

  it.each([
    ['depth 4', { 'assignee.team.org.region.name': 'North' }, /at most 3 relations/],
    ['a non-relation field', { 'title.name': 'x' }, /title has no sub-fields/],
    [
      'an unknown field of the target',
      { 'assignee.nope': 'x' },
      /filter\.assignee\.nope: in people, Unknown field "nope"/,
    ],
    ['a value of the wrong type', { 'assignee.salary': { _gt: 'abc' } }, /takes a number/],
    ['an enum value the target does not have', { 'assignee.level': 'boss' }, /level/],
    ['a target in another database', { 'vault.code': '1234' }, /another database/],
    ['past the segment bound', { 'assignee.a.b.c.d.e.f.g.h': 1 }, /more than 8 segments/],
  ])('refuses %s with 400', async (_label, filter, message) => {
    const reply = await list(owner.token, filter)
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.message).toMatch(message)
  })

  it("refuses a grant's item_filter through a relation when saved (422, nothing written)", async () => {
    const made = await call('POST', '/api/v1/roles', owner.token, { name: 'relation_grant' })
    expect(made.status, made.text).toBe(201)
    const grants = [{ resource: 'collections/tasks', action: 'read', item_filter: { 'assignee.name': 'Sam' } }]
    const saved = await call('PUT', `/api/v1/roles/${made.body.data.id}/grants`, owner.token, { grants })
    expect(saved.status, saved.text).toBe(422)
    expect(saved.text).toMatch(/assignee is a relation/)
  })

  it('from a kv collection (its derived table is the outer row)', async () => {
    const filter = encodeURIComponent(JSON.stringify({ 'assignee.team.name': 'Beta' }))
    const reply = await call('GET', `/api/v1/collections/kvtasks/records?filter=${filter}`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((r: { title: string }) => r.title)).toEqual(['for Kim'])
  })

  it('refuses a sort through a relation with 400', async () => {
    const reply = await call('GET', '/api/v1/collections/tasks/records?sortBy=assignee.name', owner.token)
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.message).toMatch(/assignee is a relation; only a records filter follows it/)
  })

  it('applies to aggregates too', async () => {
    const filter = encodeURIComponent(JSON.stringify({ 'assignee.team.name': 'Alpha' }))
    const reply = await call(
      'GET',
      `/api/v1/collections/tasks/records/aggregate?filter=${filter}&aggregate=count`,
      owner.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(JSON.stringify(reply.body.data)).toContain('1')
  })
})

// The hostile table: a viewer probing, through a relation, a record or a field it may not read. Each
// filter answers exactly what it answers when the relation is null (task "three"), and never an error.
describe('filters through relations (a viewer)', () => {
  it.each([
    ['a record outside its row rule', { 'assignee.name': 'Kim' }, []],
    ['a record outside its row rule, negated', { 'assignee.name': { _neq: 'Sam' } }, []],
    ['a record outside its row rule, not null', { 'assignee.name': { _nnull: true } }, ['one']],
    ['a field outside its fields', { 'assignee.salary': { _gt: 150 } }, []],
    ['a field outside its fields, null', { 'assignee.salary': { _null: true } }, []],
    ['a field outside its fields, not null', { 'assignee.salary': { _nnull: true } }, []],
    [
      'a field outside its fields, array format',
      [{ field: 'assignee.salary', op: 'between', value: 0, valueTo: 1000 }],
      [],
    ],
    ['a collection it may not read', { 'assignee.team.name': 'Alpha' }, []],
    ['a collection it may not read, text operator', { 'assignee.team.secret': { _starts_with: 's' } }, []],
    ['a field that does not exist there', { 'assignee.team.nope': 'x' }, []],
    ['a kv collection it may not read', { 'helper.name': 'Ann' }, []],
    ['a collection in another database it may not read', { 'vault.code': '1234' }, []],
    ['one branch of an _or', { _or: [{ 'assignee.name': 'Kim' }, { title: 'three' }] }, ['three']],
  ])('%s matches as a null relation would', async (_label, filter, expected) => {
    expect(await titles(viewer.token, filter)).toEqual(expected)
  })

  it('sees what its rules let it see', async () => {
    expect(await titles(viewer.token, { 'assignee.name': 'Sam' })).toEqual(['one'])
  })

  it('an owner-scoped target: rows of others match nothing', async () => {
    expect(await titles(ownerScoped.token, { 'assignee.name': 'Sam' })).toEqual([])
    expect(await titles(ownerScoped.token, { 'assignee.name': { _nnull: true } })).toEqual([])
  })

  it('a relation field of the target outside its fields matches nothing, though the next collection is readable', async () => {
    expect(await titles(owner.token, { 'assignee.team.name': 'Alpha' })).toEqual(['one'])
    expect(await titles(narrow.token, { 'assignee.team.name': 'Alpha' })).toEqual([])
    expect(await titles(narrow.token, { 'assignee.name': 'Sam' })).toEqual(['one'])
  })

  it('depth and bounds are refused for a viewer as for anyone (nothing about the data in them)', async () => {
    const deep = await list(viewer.token, { 'parent.parent.parent.parent.title': 'x' })
    expect(deep.status, deep.text).toBe(400)
    expect(deep.body.message).toMatch(/at most 3 relations/)
  })
})

// The records service's other reads by filter (what flows' crud_* steps, lenses and the tool server call)
// answer through relations with the same rules, a write by filter included.
describe('filters through relations in the records service', () => {
  it('find, matchingIds and aggregate apply the target rules to a viewer', async () => {
    const writer = await personWith('relation_writer', [
      { resource: 'collections/tasks', action: 'read' },
      { resource: 'collections/tasks', action: 'update' },
      { resource: 'collections/people', action: 'read', item_filter: { name: 'Sam' } },
    ])
    const projectId = server.app.defaultProject.id
    const roles = (await call('GET', '/api/v1/roles', owner.token)).body.data as { id: string; name: string }[]
    const principal = principals.user(
      {
        homeProjectId: projectId,
        userId: writer.id,
        roleId: roles.find((r) => r.name === 'relation_writer')!.id,
        roleName: 'relation_writer',
        superAdmin: false,
      },
      { id: 'direct-call', expiresAt: 4_000_000_000 },
    )
    const { records } = server.app
    const kim = JSON.stringify({ 'assignee.name': 'Kim' })
    const sam = JSON.stringify({ 'assignee.name': 'Sam' })
    const found = async (filter: string) =>
      (await records.find(principal, 'tasks', { filter, limit: 10, offset: 0 })).data.map((r) => r.title)
    expect(await found(kim)).toEqual([])
    expect(await found(sam)).toEqual(['one'])
    expect(await records.matchingIds(principal, 'tasks', 'update', { filter: kim }, 10)).toEqual([])
    expect(await records.matchingIds(principal, 'tasks', 'update', { filter: sam }, 10)).toHaveLength(1)
    const counted = async (filter: string) =>
      (await records.aggregate(principal, 'tasks', { filter, aggregate: [{ fn: 'count' }], limit: 1 })).data
    expect(JSON.stringify(await counted(kim))).toMatch(/:0\b/)
    expect(JSON.stringify(await counted(sam))).toMatch(/:1\b/)
  })
})
