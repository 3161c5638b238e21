import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'
import { createCollection, createRecord, expectError, freshName } from './records-fixtures.js'

/**
 * Saved views (issue 29 item 1, decision 063) over real HTTP: CRUD, personal and shared views and who may
 * make which, the save-time check naming the path, removal with the collection (and a database deleted with
 * cascade) while truncate keeps them, and listing through a view as the caller: the caller's row and column
 * rules always apply on top of the view's, whoever wrote it.
 */
const VIEWS = '/api/v1/views'
let server: TestServer
let owner: Account
/** Built-in editor: makes shared views. */
let editor: Account
/** Built-in viewers: personal views only. */
let alice: Account
let bob: Account
/** Reads tasks, no system/views grant. */
let outsider: Account
/** system/views read; reads the tasks assigned to bob only, and their title and assignee only. */
let narrow: Account
let tasks: string

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, headers, ...(body === undefined ? {} : { body }) })

async function createView(body: Record<string, unknown>, token = owner.token): Promise<any> {
  const reply = await request('POST', VIEWS, token, { collection: tasks, ...body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

const titles = (reply: Reply): string[] => reply.body.data.map((r: any) => r.title as string).sort()

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  tasks = await createCollection(server, owner.token, freshName('tasks'), [
    { name: 'title', type: 'text', required: true },
    { name: 'status', type: 'text', required: false },
    { name: 'assignee', type: 'text', required: false },
    { name: 'salary', type: 'number', required: false },
  ])
  const rows = [
    { title: 'A', status: 'open', assignee: 'bob', salary: 100 },
    { title: 'B', status: 'open', assignee: 'alice', salary: 200 },
    { title: 'C', status: 'closed', assignee: 'bob', salary: 300 },
    { title: 'D', status: 'open', assignee: 'carol', salary: 400 },
  ]
  for (const row of rows) await createRecord(server, owner.token, tasks, row)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  alice = await createAccount(server, owner.token, { role: 'viewer' })
  bob = await createAccount(server, owner.token, { role: 'viewer' })
  const read = { resource: `collections/${tasks}`, action: 'read' }
  outsider = await accountWithGrants(server, owner.token, [read])
  narrow = await accountWithGrants(server, owner.token, [
    { resource: 'system/views', action: 'read' },
    { ...read, item_filter: { assignee: { _eq: 'bob' } }, fields: ['title', 'assignee'] },
  ] as never)
})
afterAll(async () => {
  await server?.stop()
})

describe('CRUD', () => {
  it('creates, lists (paged), reads, changes and deletes a shared view', async () => {
    const view = await createView({
      name: 'Open tasks',
      shared: true,
      filter: { status: { _eq: 'open' } },
      sortBy: '-title',
      fields: ['title', 'status'],
      limit: 10,
      layout: 'kanban',
      layoutOptions: { groupBy: 'status' },
    })
    expect(view).toMatchObject({
      name: 'Open tasks',
      collection: tasks,
      shared: true,
      ownerId: owner.id,
      filter: { status: { _eq: 'open' } },
      sortBy: '-title',
      fields: ['title', 'status'],
      limit: 10,
      search: null,
      layout: 'kanban',
      layoutOptions: { groupBy: 'status' },
    })
    const listed = await request('GET', `${VIEWS}?limit=100&collection=${tasks}`, alice.token)
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body).toMatchObject({ page: 1, limit: 100, hasMore: false, total: expect.any(Number) })
    expect(listed.body.data.map((v: any) => v.id)).toContain(view.id)
    expect((await request('GET', `${VIEWS}/${view.id}`, alice.token)).body.data.name).toBe('Open tasks')

    const records = await request('GET', `${VIEWS}/${view.id}/records`, alice.token)
    expect(records.status, records.text).toBe(200)
    expect(records.body.data.map((r: any) => r.title)).toEqual(['D', 'B', 'A'])
    expect(records.body.data[0].salary).toBeUndefined()
    expect(records.body).toMatchObject({ total: 3, page: 1, limit: 10, hasMore: false })

    const patched = await request('PATCH', `${VIEWS}/${view.id}`, editor.token, {
      name: 'Open',
      filter: null,
      layout: 'table',
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({
      name: 'Open',
      filter: null,
      layout: 'table',
      fields: ['title', 'status'],
    })
    expect((await request('GET', `${VIEWS}/${view.id}/records`, alice.token)).body.total).toBe(4)

    expect((await request('DELETE', `${VIEWS}/${view.id}`, editor.token)).status).toBe(204)
    expectError(await request('GET', `${VIEWS}/${view.id}`, alice.token), 404, 'not_found')
    expectError(await request('DELETE', `${VIEWS}/${view.id}`, owner.token), 404, 'not_found')
  })

  it("the caller's page, limit, cursor and filter combine with the view's", async () => {
    const view = await createView({
      name: freshName('v'),
      shared: true,
      filter: { status: { _eq: 'open' } },
      sortBy: 'title',
    })
    const page = await request('GET', `${VIEWS}/${view.id}/records?limit=2&page=2`, alice.token)
    expect(page.status, page.text).toBe(200)
    expect(page.body).toMatchObject({ total: 3, page: 2, limit: 2, hasMore: false })
    expect(page.body.data.map((r: any) => r.title)).toEqual(['D'])
    const filtered = await request(
      'GET',
      `${VIEWS}/${view.id}/records?filter=${encodeURIComponent(JSON.stringify([{ field: 'assignee', op: 'eq', value: 'bob' }]))}`,
      alice.token,
    )
    expect(filtered.status, filtered.text).toBe(200)
    expect(titles(filtered)).toEqual(['A'])
    const first = await request('GET', `${VIEWS}/${view.id}/records?limit=2&cursor=`, alice.token)
    expect(first.body.data.map((r: any) => r.title)).toEqual(['A', 'B'])
    const next = await request(
      'GET',
      `${VIEWS}/${view.id}/records?limit=2&cursor=${encodeURIComponent(first.body.cursors.next)}`,
      alice.token,
    )
    expect(next.body.data.map((r: any) => r.title)).toEqual(['D'])
  })

  it("a view's filter follows relations and reads $CURRENT_USER as the reader", async () => {
    // Both in the default database: a filter follows relations only within one (an r2_sql file is its own).
    const people = await createCollection(
      server,
      owner.token,
      freshName('people'),
      [{ name: 'name', type: 'text', required: true }],
      { storageType: 'd1' },
    )
    const ann = await createRecord(server, owner.token, people, { name: 'Ann' })
    const ben = await createRecord(server, owner.token, people, { name: 'Ben' })
    const jobs = await createCollection(
      server,
      owner.token,
      freshName('jobs'),
      [
        { name: 'title', type: 'text', required: true },
        {
          name: 'person',
          type: 'relation',
          required: false,
          relationConfig: { targetCollection: people, relationType: 'belongsTo' },
        },
      ],
      { storageType: 'd1' },
    )
    await createRecord(server, owner.token, jobs, { title: 'for ann', person: ann.id })
    await createRecord(server, owner.token, jobs, { title: 'for ben', person: ben.id })
    const view = await createView({
      name: freshName('rel'),
      collection: jobs,
      shared: true,
      filter: { 'person.name': { _eq: 'Ann' } },
    })
    expect(titles(await request('GET', `${VIEWS}/${view.id}/records`, alice.token))).toEqual(['for ann'])
    const mine = await createView({
      name: freshName('me'),
      collection: jobs,
      shared: true,
      filter: { created_by: { _eq: '$CURRENT_USER' } },
    })
    await createRecord(server, editor.token, jobs, { title: "editor's" })
    expect(titles(await request('GET', `${VIEWS}/${mine.id}/records`, editor.token))).toEqual(["editor's"])
    expect(titles(await request('GET', `${VIEWS}/${mine.id}/records`, owner.token))).toEqual(['for ann', 'for ben'])
  })

  it('names clash among shared views (409), not with a personal view of the same name', async () => {
    const name = freshName('same')
    await createView({ name, shared: true })
    expectError(
      await request('POST', VIEWS, editor.token, { name, collection: tasks, shared: true }),
      409,
      'already_exists',
    )
    expect((await request('POST', VIEWS, alice.token, { name, collection: tasks })).status).toBe(201)
  })
})

describe('permissions', () => {
  it('anonymous callers are 401 everywhere', async () => {
    const view = await createView({ name: freshName('anon'), shared: true })
    for (const [method, path] of [
      ['GET', VIEWS],
      ['GET', `${VIEWS}/${view.id}`],
      ['GET', `${VIEWS}/${view.id}/records`],
      ['PATCH', `${VIEWS}/${view.id}`],
      ['DELETE', `${VIEWS}/${view.id}`],
    ] as const)
      expectError(
        await request(method, path, undefined, method === 'PATCH' ? { name: 'x' } : undefined),
        401,
        'unauthorized',
      )
    expectError(await request('POST', VIEWS, undefined, { name: 'x', collection: tasks }), 401, 'unauthorized')
  })

  it('without system/views: 403; a viewer keeps personal views but may not share, change or delete shared ones', async () => {
    const view = await createView({ name: freshName('shared'), shared: true })
    expectError(await request('GET', VIEWS, outsider.token), 403, 'forbidden')
    expectError(await request('GET', `${VIEWS}/${view.id}/records`, outsider.token), 403, 'forbidden')
    expectError(await request('POST', VIEWS, outsider.token, { name: 'x', collection: tasks }), 403, 'forbidden')
    expectError(
      await request('POST', VIEWS, alice.token, { name: 'x', collection: tasks, shared: true }),
      403,
      'forbidden',
    )
    expectError(await request('PATCH', `${VIEWS}/${view.id}`, alice.token, { name: 'mine now' }), 403, 'forbidden')
    expectError(await request('DELETE', `${VIEWS}/${view.id}`, alice.token), 403, 'forbidden')
    const personal = await createView({ name: freshName('mine') }, alice.token)
    expect(personal).toMatchObject({ shared: false, ownerId: alice.id })
    expectError(await request('PATCH', `${VIEWS}/${personal.id}`, alice.token, { shared: true }), 403, 'forbidden')
    const renamed = await request('PATCH', `${VIEWS}/${personal.id}`, alice.token, { name: 'renamed', limit: 5 })
    expect(renamed.status, renamed.text).toBe(200)
    expect((await request('DELETE', `${VIEWS}/${personal.id}`, alice.token)).status).toBe(204)
    // The editor shares its own.
    const editors = await createView({ name: freshName('ed') }, editor.token)
    const shared = await request('PATCH', `${VIEWS}/${editors.id}`, editor.token, { shared: true })
    expect(shared.status, shared.text).toBe(200)
    expect((await request('GET', `${VIEWS}/${editors.id}`, alice.token)).status).toBe(200)
  })

  it("another user's personal view is missing (404) to everyone else, admins included, and not listed", async () => {
    const personal = await createView(
      { name: freshName('private'), filter: { assignee: { _eq: 'alice' } } },
      alice.token,
    )
    for (const token of [bob.token, editor.token, owner.token]) {
      expectError(await request('GET', `${VIEWS}/${personal.id}`, token), 404, 'not_found')
      expectError(await request('GET', `${VIEWS}/${personal.id}/records`, token), 404, 'not_found')
      expectError(await request('PATCH', `${VIEWS}/${personal.id}`, token, { name: 'taken' }), 404, 'not_found')
      expectError(await request('DELETE', `${VIEWS}/${personal.id}`, token), 404, 'not_found')
      const listed = await request('GET', `${VIEWS}?limit=100`, token)
      expect(listed.body.data.map((v: any) => v.id)).not.toContain(personal.id)
    }
    const mine = await request('GET', `${VIEWS}/${personal.id}/records`, alice.token)
    expect(titles(mine)).toEqual(['B'])
  })

  it("another project's view is 404 to this project's users, and not listed", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const made = await request(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: tasks, fields: [{ name: 'title', type: 'text', required: true }] },
      there,
    )
    expect(made.status, made.text).toBe(201)
    const view = await request('POST', VIEWS, owner.token, { name: 'Theirs', collection: tasks, shared: true }, there)
    expect(view.status, view.text).toBe(201)
    const id = view.body.data.id as string
    for (const token of [editor.token, owner.token]) {
      expectError(await request('GET', `${VIEWS}/${id}`, token), 404, 'not_found')
      expectError(await request('GET', `${VIEWS}/${id}/records`, token), 404, 'not_found')
      expectError(await request('PATCH', `${VIEWS}/${id}`, token, { name: 'x' }), 404, 'not_found')
      expectError(await request('DELETE', `${VIEWS}/${id}`, token), 404, 'not_found')
    }
    expect((await request('GET', `${VIEWS}?limit=100`, owner.token)).body.data.map((v: any) => v.id)).not.toContain(id)
    expect((await request('GET', `${VIEWS}/${id}`, owner.token, undefined, there)).status).toBe(200)
  })
})

describe('the save-time check', () => {
  const refusedAt = async (body: Record<string, unknown>, at: string, token = owner.token) => {
    const reply = await request('POST', VIEWS, token, { name: freshName('bad'), collection: tasks, ...body })
    expectError(reply, 422, 'validation_error')
    expect(reply.body.details.at, reply.text).toBe(at)
    expect(reply.body.message.startsWith(at), reply.text).toBe(true)
    return reply
  }

  it('refuses unknown fields and bad filters with 422 naming the path', async () => {
    expect((await refusedAt({ filter: { nope: { _eq: 1 } } }, 'filter')).body.message).toContain('nope')
    await refusedAt({ filter: { title: { _bogus: 1 } } }, 'filter.title')
    await refusedAt({ filter: { salary: { _eq: 'lots' } } }, 'filter.salary')
    await refusedAt(
      {
        filter: [
          { field: 'title', op: 'eq', value: 'A' },
          { field: 'title', op: 'nope', value: 1 },
        ],
      },
      'filter[1].op',
    )
    expect((await refusedAt({ fields: ['title', 'nope'] }, 'fields[1]')).body.message).toContain('nope')
    expect((await refusedAt({ sortBy: '-nope' }, 'sortBy')).body.message).toContain('nope')
    await refusedAt({ collection: 'no_such_collection' }, 'collection')
    const view = await createView({ name: freshName('ok'), fields: ['title'] })
    const patched = await request('PATCH', `${VIEWS}/${view.id}`, owner.token, { fields: ['title', 'ghost'] })
    expectError(patched, 422, 'validation_error')
    expect(patched.body.details.at).toBe('fields[1]')
    expect((await request('GET', `${VIEWS}/${view.id}`, owner.token)).body.data.fields).toEqual(['title'])
  })

  it('refuses a layout it does not know and unknown keys (400)', async () => {
    expectError(
      await request('POST', VIEWS, owner.token, { name: 'x', collection: tasks, layout: 'gantt' }),
      400,
      'invalid_request',
    )
    expectError(
      await request('POST', VIEWS, owner.token, { name: 'x', collection: tasks, owner: 'me' }),
      400,
      'invalid_request',
    )
  })
})

describe('with the collection', () => {
  it('truncate keeps the views; deleting the collection removes them', async () => {
    const name = await createCollection(server, owner.token, freshName('scratch'), [
      { name: 'title', type: 'text', required: true },
    ])
    await createRecord(server, owner.token, name, { title: 'x' })
    const shared = await createView({ name: freshName('s'), collection: name, shared: true })
    const personal = await createView({ name: freshName('p'), collection: name }, alice.token)
    const truncated = await request('POST', `/api/v1/collections/${name}/truncate`, owner.token, {})
    expect(truncated.status, truncated.text).toBe(200)
    expect((await request('GET', `${VIEWS}/${shared.id}`, owner.token)).status).toBe(200)
    const empty = await request('GET', `${VIEWS}/${shared.id}/records`, owner.token)
    expect(empty.status, empty.text).toBe(200)
    expect(empty.body.data).toEqual([])
    const removed = await request('DELETE', `/api/v1/collections/${name}`, owner.token)
    expect(removed.status, removed.text).toBeLessThan(300)
    expectError(await request('GET', `${VIEWS}/${shared.id}`, owner.token), 404, 'not_found')
    expectError(await request('GET', `${VIEWS}/${personal.id}`, alice.token), 404, 'not_found')
    // A collection made again under the name does not bring them back.
    await createCollection(server, owner.token, name, [{ name: 'title', type: 'text', required: true }])
    expect((await request('GET', `${VIEWS}?collection=${name}`, owner.token)).body.total).toBe(0)
  })

  it('a database deleted with cascade takes the views of its collections', async () => {
    const database = await request('POST', '/api/v1/databases', owner.token, { name: freshName('db'), kind: 'sqlite' })
    expect(database.status, database.text).toBe(201)
    const name = await createCollection(
      server,
      owner.token,
      freshName('remote'),
      [{ name: 'title', type: 'text', required: true }],
      {
        storageType: 'remote',
        databaseId: database.body.data.id,
      },
    )
    const view = await createView({ name: freshName('r'), collection: name, shared: true })
    const deleted = await request('DELETE', `/api/v1/databases/${database.body.data.id}?cascade=true`, owner.token)
    expect(deleted.status, deleted.text).toBe(200)
    expectError(await request('GET', `${VIEWS}/${view.id}`, owner.token), 404, 'not_found')
  })
})

describe('a view never widens what its reader may read', () => {
  it("an admin's broad shared view, read by a caller with an item_filter and a field allowlist, shows only that caller's rows and fields", async () => {
    const view = await createView({
      name: freshName('everything'),
      shared: true,
      filter: { title: { _nnull: true } },
      fields: ['title', 'assignee', 'status', 'salary'],
      sortBy: 'title',
    })
    // As its author reads it: every row, every field.
    const asAdmin = await request('GET', `${VIEWS}/${view.id}/records`, owner.token)
    expect(titles(asAdmin)).toEqual(['A', 'B', 'C', 'D'])
    expect(asAdmin.body.data[0].salary).toBe(100)

    const reply = await request('GET', `${VIEWS}/${view.id}/records`, narrow.token)
    expect(reply.status, reply.text).toBe(200)
    expect(titles(reply)).toEqual(['A', 'C'])
    expect(reply.body.total).toBe(2)
    for (const record of reply.body.data) {
      expect(record.assignee).toBe('bob')
      expect(record).not.toHaveProperty('salary')
      expect(record).not.toHaveProperty('status')
    }
    expect(reply.text).not.toContain('400')
    expect(reply.text).not.toContain('closed')
  })

  it('a filter, sort or search on a field the reader may not read is refused to that reader, not answered', async () => {
    const bySalary = await createView({ name: freshName('rich'), shared: true, filter: { salary: { _gte: 300 } } })
    expect(titles(await request('GET', `${VIEWS}/${bySalary.id}/records`, owner.token))).toEqual(['C', 'D'])
    expectError(await request('GET', `${VIEWS}/${bySalary.id}/records`, narrow.token), 403, 'forbidden')

    const sorted = await createView({ name: freshName('sorted'), shared: true, sortBy: '-salary' })
    expect((await request('GET', `${VIEWS}/${sorted.id}/records`, owner.token)).status).toBe(200)
    expectError(await request('GET', `${VIEWS}/${sorted.id}/records`, narrow.token), 403, 'forbidden')

    const searched = await createView({ name: freshName('searched'), shared: true, search: 'open' })
    expect((await request('GET', `${VIEWS}/${searched.id}/records`, owner.token)).status).toBe(200)
    expectError(await request('GET', `${VIEWS}/${searched.id}/records`, narrow.token), 403, 'forbidden')
  })
})
