import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * The data operations (crud_action, crud_create, crud_read, crud_update, crud_delete, crud_query; issue 16
 * item 2, decision 031) in real flow runs over HTTP, on SQLite and PostgreSQL: they act as the run's
 * principal through the records service, so a row rule or a field allowlist binds a flow exactly as it
 * binds the API, a refusal is a typed step error, and what was stored is checked through the API.
 */
const BASE = '/api/v1/automate'
const TASKS = '/api/v1/collections/tasks/records'
let server: TestServer
let owner: Account
/** May run flows; on tasks: reads, updates and deletes only the rows it owns (owner = itself), creates any. */
let member: Account
/** May run flows; on tasks: reads title and team only. */
let narrow: Account
/** May run flows; may read tasks but not create them. */
let readOnly: Account

const as =
  (token: string): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body })
const flowOf = (token: string, operations: unknown[]) => activeFlow(as(token), 'data ops', operations)

/** Runs the flow as `token` with `body` as $trigger.body and answers the finished run (with stepLogs). */
async function run(token: string, operations: unknown[], body: Record<string, unknown> = {}): Promise<any> {
  return executeToEnd(as(token), as(owner.token), await flowOf(token, operations), body)
}

const step = (done: any, key: string) => done.stepLogs.find((s: any) => s.key === key)

async function stored(filter: Record<string, unknown> = {}): Promise<any[]> {
  const reply = await server.request(
    'GET',
    `${TASKS}?limit=100&sortBy=title&order=asc&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    { token: owner.token },
  )
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const fields = [
    { name: 'title', type: 'text', required: true },
    { name: 'team', type: 'text', required: false },
    { name: 'hours', type: 'integer', required: false },
    { name: 'owner', type: 'text', required: false },
    { name: 'secret', type: 'text', required: false },
  ]
  const created = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'tasks', fields },
  })
  expect(created.status, created.text).toBe(201)
  const automate = { resource: 'system/automate', action: 'manage' }
  const mine = { owner: { _eq: '$CURRENT_USER' } }
  member = await accountWithGrants(server, owner.token, [
    automate,
    { resource: 'collections/tasks', action: 'read', item_filter: mine },
    { resource: 'collections/tasks', action: 'create' },
    { resource: 'collections/tasks', action: 'update', item_filter: mine },
    { resource: 'collections/tasks', action: 'delete', item_filter: mine },
  ] as never)
  narrow = await accountWithGrants(server, owner.token, [
    automate,
    { resource: 'collections/tasks', action: 'read', fields: ['title', 'team'] },
  ] as never)
  readOnly = await accountWithGrants(server, owner.token, [automate, { resource: 'collections/tasks', action: 'read' }])
  const rows = [
    { title: 'a1', team: 'red', hours: 1, owner: member.id, secret: 's1' },
    { title: 'a2', team: 'red', hours: 2, owner: member.id, secret: 's2' },
    { title: 'a3', team: 'blue', hours: 4, owner: member.id, secret: 's3' },
    { title: 'b1', team: 'red', hours: 8, owner: owner.id, secret: 's4' },
    { title: 'b2', team: 'blue', hours: 16, owner: owner.id, secret: 's5' },
  ]
  for (const row of rows)
    expect((await server.request('POST', TASKS, { token: owner.token, body: row })).status).toBe(201)
})
afterAll(async () => {
  await server?.stop()
})

describe('data operations in a flow', () => {
  it('create, read, update, query and delete chain through templates; the API sees each write', async () => {
    const done = await run(
      owner.token,
      [
        {
          key: 'make',
          type: 'crud_create',
          config: { collection: 'tasks', data: { title: '{{$trigger.body.title}}', team: 'green', hours: 3 } },
        },
        {
          key: 'many',
          type: 'crud_create',
          config: {
            collection: 'tasks',
            data: [
              { title: 'g2', team: 'green', hours: 5 },
              { title: 'g3', team: 'green', hours: 7 },
            ],
          },
        },
        {
          key: 'find',
          type: 'crud_read',
          config: {
            collection: 'tasks',
            filter: { team: { _eq: 'green' } },
            sort: [{ field: 'hours', order: 'desc' }],
            limit: 2,
            offset: 1,
            fields: ['title'],
          },
        },
        {
          key: 'bump',
          type: 'crud_update',
          config: { collection: 'tasks', id: '{{$steps.make.record.id}}', data: { hours: 30 } },
        },
        {
          key: 'sums',
          type: 'crud_query',
          config: {
            collection: 'tasks',
            groupBy: ['team'],
            aggregate: [{ fn: 'count' }, { fn: 'sum', field: 'hours' }],
            sort: [{ field: 'sum_hours', order: 'desc' }],
          },
        },
        {
          key: 'drop',
          type: 'crud_delete',
          config: { collection: 'tasks', filter: { team: { _eq: 'green' }, hours: { _lt: 10 } } },
        },
        {
          key: 'left',
          type: 'crud_action',
          config: {
            collection: 'tasks',
            action: 'query',
            filter: { team: { _eq: 'green' } },
            aggregate: [{ fn: 'count' }],
          },
        },
      ],
      { title: 'g1' },
    )
    expect(done.status, JSON.stringify(done.error)).toBe('completed')
    expect(step(done, 'make').output.record).toMatchObject({
      title: 'g1',
      team: 'green',
      hours: 3,
      created_by: owner.id,
    })
    expect(step(done, 'many').output).toMatchObject({ count: 2, records: [{ title: 'g2' }, { title: 'g3' }] })
    const found = step(done, 'find').output
    expect(found).toMatchObject({ count: 2, hasMore: false })
    expect(found.records.map((r: any) => r.title)).toEqual(['g2', 'g1'])
    expect(found.records[0].hours).toBeUndefined()
    expect(step(done, 'bump').output).toMatchObject({ count: 1, records: [{ title: 'g1', hours: 30 }] })
    expect(step(done, 'sums').output).toEqual({
      rows: [
        { team: 'green', count: 3, sum_hours: 42 },
        { team: 'red', count: 3, sum_hours: 11 },
        { team: 'blue', count: 2, sum_hours: 20 },
      ].sort((a, b) => b.sum_hours - a.sum_hours),
      count: 3,
      hasMore: false,
    })
    expect(step(done, 'drop').output).toMatchObject({ count: 2 })
    expect(step(done, 'left').output).toEqual({ rows: [{ count: 1 }], count: 1, hasMore: false })
    expect((await stored({ team: { _eq: 'green' } })).map((r) => [r.title, r.hours])).toEqual([['g1', 30]])
    // The record.create, update and delete went through the API's pipeline: the soft-deleted ones are there, deleted.
    const deleted = await server.request(
      'GET',
      `${TASKS}?include_deleted=true&limit=100&filter=${encodeURIComponent(JSON.stringify({ title: { _in: ['g2', 'g3'] } }))}`,
      { token: owner.token },
    )
    expect(deleted.body.data.map((r: any) => r.deleted_at !== null)).toEqual([true, true])
  })

  it('row rules bind the run: it reads, counts, updates and deletes only what its user may', async () => {
    const done = await run(member.token, [
      {
        key: 'read',
        type: 'crud_read',
        config: { collection: 'tasks', sort: [{ field: 'title', order: 'asc' }], limit: 100 },
      },
      {
        key: 'count',
        type: 'crud_query',
        config: { collection: 'tasks', groupBy: ['team'], aggregate: [{ fn: 'sum', field: 'hours' }] },
      },
      {
        key: 'touch',
        type: 'crud_update',
        config: { collection: 'tasks', filter: { hours: { _gte: 2 } }, data: { team: 'touched' } },
      },
    ])
    expect(done.status, JSON.stringify(done.error)).toBe('completed')
    expect(step(done, 'read').output.records.map((r: any) => r.title)).toEqual(['a1', 'a2', 'a3'])
    expect(step(done, 'count').output.rows).toEqual([
      { team: 'blue', sum_hours: 4 },
      { team: 'red', sum_hours: 3 },
    ])
    expect(step(done, 'touch').output.count).toBe(2)
    expect((await stored({ team: { _eq: 'touched' } })).map((r) => r.title)).toEqual(['a2', 'a3'])
    // b1 and b2 (hours 8 and 16) matched the filter but are not the member's: untouched.
    expect((await stored({ title: { _in: ['b1', 'b2'] } })).map((r) => r.team)).toEqual(['red', 'blue'])
  })

  it("another user's record by id is a typed step error (record_not_found, 404) and nothing is written", async () => {
    const [b1] = await stored({ title: { _eq: 'b1' } })
    const update = await run(member.token, [
      { key: 'steal', type: 'crud_update', config: { collection: 'tasks', id: b1.id, data: { owner: member.id } } },
    ])
    expect(update.status).toBe('failed')
    expect(step(update, 'steal')).toMatchObject({ status: 'failed', error: { code: 'record_not_found' } })
    expect(update.error).toMatchObject({ code: 'record_not_found', step: 'steal', statusCode: 404 })
    const remove = await run(member.token, [
      { key: 'zap', type: 'crud_delete', config: { collection: 'tasks', ids: [b1.id], permanent: true } },
    ])
    expect(step(remove, 'zap')).toMatchObject({ status: 'failed', error: { code: 'record_not_found' } })
    const again = await run(member.token, [
      { key: 'zap', type: 'crud_action', config: { collection: 'tasks', action: 'delete', id: b1.id } },
    ])
    expect(step(again, 'zap')).toMatchObject({ status: 'failed', error: { code: 'record_not_found' } })
    expect((await stored({ title: { _eq: 'b1' } }))[0]).toMatchObject({ owner: owner.id, deleted_at: null })
  })

  it("a mixed list of ids (one not the user's) writes nothing", async () => {
    const [a1] = await stored({ title: { _eq: 'a1' } })
    const [b2] = await stored({ title: { _eq: 'b2' } })
    const done = await run(member.token, [
      {
        key: 'both',
        type: 'crud_update',
        config: { collection: 'tasks', ids: [a1.id, b2.id], data: { team: 'mixed' } },
      },
    ])
    expect(step(done, 'both')).toMatchObject({ status: 'failed', error: { code: 'record_not_found' } })
    expect(await stored({ team: { _eq: 'mixed' } })).toEqual([])
  })

  it('a field allowlist binds the run: hidden fields are not read, not grouped, not filtered on', async () => {
    const read = await run(narrow.token, [
      { key: 'read', type: 'crud_read', config: { collection: 'tasks', limit: 1 } },
    ])
    expect(read.status, JSON.stringify(read.error)).toBe('completed')
    const record = step(read, 'read').output.records[0]
    expect(record.title).toEqual(expect.any(String))
    expect(record.secret).toBeUndefined()
    expect(record.hours).toBeUndefined()
    for (const config of [
      { collection: 'tasks', groupBy: ['secret'] },
      { collection: 'tasks', aggregate: [{ fn: 'sum', field: 'hours' }] },
      { collection: 'tasks', filter: { secret: { _eq: 's1' } }, aggregate: [{ fn: 'count' }] },
    ]) {
      const refused = await run(narrow.token, [{ key: 'q', type: 'crud_query', config }])
      expect(step(refused, 'q'), JSON.stringify(config)).toMatchObject({
        status: 'failed',
        error: { code: 'forbidden' },
      })
      expect(step(refused, 'q').output).toBeNull()
    }
  })

  it('a create the user may not make fails the step as forbidden (403) and stores nothing', async () => {
    const done = await run(readOnly.token, [
      { key: 'make', type: 'crud_create', config: { collection: 'tasks', data: { title: 'nope' } } },
    ])
    expect(done.status).toBe('failed')
    expect(done.error).toMatchObject({ code: 'forbidden', step: 'make', statusCode: 403 })
    expect(await stored({ title: { _eq: 'nope' } })).toEqual([])
  })

  it('a system table or a made-up name is no collection: collection_not_found, nothing read', async () => {
    for (const collection of ['flows', 'users', 'sessions', 'tasks; drop table tasks']) {
      const done = await run(owner.token, [{ key: 'peek', type: 'crud_read', config: { collection } }])
      expect(step(done, 'peek'), collection).toMatchObject({
        status: 'failed',
        output: null,
        error: { code: 'collection_not_found' },
      })
      const query = await run(owner.token, [
        { key: 'peek', type: 'crud_query', config: { collection, aggregate: [{ fn: 'count' }] } },
      ])
      expect(step(query, 'peek'), collection).toMatchObject({
        status: 'failed',
        output: null,
        error: { code: 'collection_not_found' },
      })
    }
    expect(await stored({ title: { _eq: 'a1' } })).toHaveLength(1)
  })

  it("a bad value is the API's validation error, typed; onError continue lets later steps read it", async () => {
    const done = await run(owner.token, [
      {
        key: 'bad',
        type: 'crud_create',
        config: { collection: 'tasks', data: { title: 'x', hours: 'many' } },
        onError: 'continue',
      },
      { key: 'after', type: 'set_variable', config: { key: 'k', value: '{{$steps.bad.error.code}}' } },
    ])
    expect(done.status).toBe('completed')
    expect(step(done, 'after').output).toBe(step(done, 'bad').error.code)
    expect(step(done, 'bad').error.code).toMatch(/^(invalid_field|validation_error)$/)
  })

  it('a dry run (POST /flows/:id/test) writes nothing', async () => {
    const flowId = await flowOf(owner.token, [
      { key: 'make', type: 'crud_create', config: { collection: 'tasks', data: { title: 'dry' } } },
      { key: 'read', type: 'crud_read', config: { collection: 'tasks', filter: { title: { _eq: 'a1' } } } },
    ])
    const reply = await server.request('POST', `${BASE}/flows/${flowId}/test`, { token: owner.token, body: {} })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.steps.map((s: any) => [s.key, s.status])).toEqual([
      ['make', 'skipped'],
      ['read', 'completed'],
    ])
    expect(await stored({ title: { _eq: 'dry' } })).toEqual([])
  })

  it('a flow with a bad data step is refused on save (422) naming the step and path', async () => {
    for (const [operation, path] of [
      [{ key: 'u', type: 'crud_update', config: { collection: 'tasks', data: {} } }, 'operations[0].config.id'],
      [{ key: 'r', type: 'crud_read', config: { collection: 'tasks', limit: 1001 } }, 'operations[0].config.limit'],
      [
        {
          key: 'q',
          type: 'crud_query',
          config: { collection: 'tasks', aggregate: [{ fn: 'median', field: 'hours' }] },
        },
        'operations[0].config.aggregate[0].fn',
      ],
      [
        { key: 'a', type: 'crud_action', config: { collection: 'tasks', action: 'create' } },
        'operations[0].config.data',
      ],
    ] as const) {
      const reply = await server.request('POST', `${BASE}/flows`, {
        token: owner.token,
        body: { name: 'bad', triggerType: 'manual', triggerConfig: {}, operations: [operation] },
      })
      expect(reply.status, reply.text).toBe(422)
      expect(reply.body).toMatchObject({ error: 'validation_error', details: { path } })
    }
  })
})
