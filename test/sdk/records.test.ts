import { ConflictError, createClient, NotFoundError, ValidationError, type PlinthClient } from '@plinth/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { ticketsDefinition, type Collections, type Ticket } from './collections.fixture.js'

// The records part of the SDK against a real server, typed by a Collections interface as `plinth types` writes
// it. Runs on SQLite, and on PostgreSQL with TEST_DATABASE_URL set.

let server: TestServer
let client: PlinthClient<Collections>
beforeAll(async () => {
  server = await startServer()
  client = createClient<Collections>({ url: server.url })
  await client.auth.signUp({ email: 'owner@example.com', password: 'owner password', name: 'Owner' })
  await client.transport.request('POST', '/api/v1/collections', { body: ticketsDefinition })
  const tickets = client.collection('tickets')
  const seed: Partial<Ticket>[] = [
    { title: 'Login fails', priority: 5, status: 'open', done: false, tags: ['bug'], meta: { area: 'auth' } },
    { title: 'Button colour', priority: 1, status: 'open', done: false, tags: ['ui'] },
    { title: 'Write guide', priority: 3, status: 'closed', done: true, tags: ['docs'], due: '2026-12-01' },
    { title: 'Crash on save', priority: 4, status: 'open', done: false, tags: ['bug', 'ui'], meta: { area: 'editor' } },
  ]
  for (const ticket of seed) await tickets.create(ticket)
})
afterAll(async () => {
  await server?.stop()
})

const titles = (records: { title: string }[]) => records.map((r) => r.title)

describe('client.collection(name).list', () => {
  it('filters with typed conditions: shorthand, operators, _or, and sorts', async () => {
    const tickets = client.collection('tickets')
    const open = await tickets.list({ filter: { status: 'open', priority: { _gte: 4 } }, sortBy: '-priority' })
    expect(titles(open.data)).toEqual(['Login fails', 'Crash on save'])
    expect(open.total).toBe(2)
    const either = await tickets.list({
      filter: { _or: [{ done: true }, { title: { _starts_with: 'Button' } }] },
      sortBy: 'priority',
    })
    expect(titles(either.data)).toEqual(['Button colour', 'Write guide'])
    const inList = await tickets.list({ filter: { priority: { _in: [1, 3] } }, sort: '-priority' })
    expect(titles(inList.data)).toEqual(['Write guide', 'Button colour'])
    const inJson = await tickets.list({ filter: { 'meta.area': 'editor' } })
    expect(titles(inJson.data)).toEqual(['Crash on save'])
    const due = await tickets.list({ filter: { due: { _nnull: true } } })
    expect(titles(due.data)).toEqual(['Write guide'])
  })

  it('projects fields and pages with a cursor; iterate walks every page', async () => {
    const tickets = client.collection('tickets')
    const page = await tickets.list({ fields: ['title'], limit: 3, cursor: '', sortBy: 'priority' })
    expect(page.data).toHaveLength(3)
    expect(Object.keys(page.data[0]!).sort()).toEqual(['created_at', 'id', 'title', 'updated_at'])
    expect(page.hasMore).toBe(true)
    expect(page.cursors?.next).toEqual(expect.any(String))
    const all: string[] = []
    for await (const ticket of tickets.iterate({ limit: 1, sortBy: 'priority' })) all.push(ticket.title)
    expect(all).toEqual(['Button colour', 'Write guide', 'Crash on save', 'Login fails'])
  })

  it('takes a filter as a string as it is', async () => {
    const reply = await client.collection('tickets').list({
      filter: JSON.stringify([{ field: 'priority', op: 'between', value: 3, valueTo: 4 }]),
      sortBy: 'priority',
    })
    expect(titles(reply.data)).toEqual(['Write guide', 'Crash on save'])
  })

  it('refuses a value the field cannot hold with a ValidationError carrying the code', async () => {
    const err = await client
      .collection<Record<string, unknown>>('tickets')
      .list({ filter: { priority: { _gt: 'high' } } })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ValidationError)
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' })
  })
})

describe('get, create, update, delete, restore', () => {
  it('creates and reads back a record with its system columns', async () => {
    const tickets = client.collection('tickets')
    const made = await tickets.create({ title: 'Fresh', priority: 2, tags: ['docs'] })
    expect(made).toMatchObject({ title: 'Fresh', priority: 2, tags: ['docs'], _version: 1 })
    const read = await tickets.get(made.id)
    expect(read).toMatchObject({ id: made.id, title: 'Fresh', _version: 1 })
  })

  it('updates at a version; a stale version is a ConflictError and changes nothing', async () => {
    const tickets = client.collection('tickets')
    const made = await tickets.create({ title: 'Versioned', priority: 1, meta: {} })
    const first = await tickets.update(made.id, { priority: 2 }, { version: made._version })
    expect(first).toMatchObject({ priority: 2, _version: made._version + 1 })
    const stale = await tickets.update(made.id, { priority: 9 }, { version: made._version }).catch((e: unknown) => e)
    expect(stale).toBeInstanceOf(ConflictError)
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed' })
    expect((await tickets.get(made.id)).priority).toBe(2)
    // The body's _version is the other channel: 409 conflict, the same class.
    const viaBody = await tickets.update(made.id, { priority: 9, _version: made._version }).catch((e) => e)
    expect(viaBody).toBeInstanceOf(ConflictError)
    expect(viaBody).toMatchObject({ status: 409, code: 'conflict' })
    // Without a version the update applies to whatever is there.
    expect(await tickets.update(made.id, { $set: { 'meta.seen': true } })).toMatchObject({ meta: { seen: true } })
  })

  it('soft-deletes, hides, and restores', async () => {
    const tickets = client.collection('tickets')
    const made = await tickets.create({ title: 'Short-lived' })
    expect(await tickets.delete(made.id)).toEqual({ permanent: false })
    const hidden = await tickets.get(made.id).catch((e: unknown) => e)
    expect(hidden).toBeInstanceOf(NotFoundError)
    expect(hidden).toMatchObject({ status: 404, code: 'record_not_found' })
    await tickets.restore(made.id)
    expect((await tickets.get(made.id)).title).toBe('Short-lived')
  })

  it('answers a missing field with a ValidationError naming it in details', async () => {
    const err = await client
      .collection('tickets')
      .create({ priority: 1 })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ValidationError)
    expect(err).toMatchObject({ status: 400, code: 'missing_field' })
    expect((err as ValidationError).details).toMatchObject({ field: 'title' })
  })
})

describe('bulk', () => {
  it('creates many in one request, reporting failed lines, and deletes by id', async () => {
    const tickets = client.collection('tickets')
    const result = await tickets.bulk.create([{ title: 'Bulk 1' }, { title: 'Bulk 2' }, { priority: 3 }])
    expect(result).toMatchObject({ imported: 2, failed: 1, total: 3 })
    expect(result.errors[0]).toMatchObject({ line: 3, code: 'missing_field', field: 'title' })
    const ids = result.records.map((r) => r.id)
    expect(await tickets.bulk.delete(ids)).toEqual({ deleted: 2 })
    expect((await tickets.list({ filter: { title: { _starts_with: 'Bulk' } } })).total).toBe(0)
  })
})
