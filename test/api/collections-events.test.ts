import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CollectionUpdateEvent } from '../../src/modules/collections/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName } from './records-fixtures.js'

/**
 * `collection.update` (docs/events.md): published once per accepted PATCH /api/v1/collections/:name, after
 * it committed, with what the audit entry holds; a refused PATCH publishes nothing; an app_event flow
 * reacts to it. Runs on the storage type TEST_STORAGE_TYPE names and on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let editor: Account
/** Every collection.update in publication order, with the definition a client read while the handler ran. */
const seen: { event: CollectionUpdateEvent; readBack: { status: number; schemaVersion?: number } }[] = []
let stop: () => void = () => {}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  stop = server.app.events.on('collection.update', async (event) => {
    const entry: (typeof seen)[number] = { event, readBack: { status: 0 } }
    seen.push(entry)
    const reply = await server.request('GET', `/api/v1/collections/${event.collection}`, { token: owner.token })
    entry.readBack = { status: reply.status, schemaVersion: reply.body?.data?.schemaVersion }
  })
})
afterAll(async () => {
  stop()
  await server?.stop()
})

const patch = (name: string, body: unknown, token = owner.token): Promise<Reply> =>
  server.request('PATCH', `/api/v1/collections/${name}`, { token, body })

/** The events of one collection, once `count` have arrived and been read back (fails after 10 s). */
async function eventsOf(name: string, count: number) {
  const deadline = Date.now() + 10_000
  for (;;) {
    const mine = seen.filter((s) => s.event.collection === name)
    if (mine.length >= count && mine.every((s) => s.readBack.status !== 0)) return mine
    if (Date.now() > deadline) throw new Error(`${name}: ${mine.length} collection.update events, expected ${count}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

type Field = Record<string, unknown>
const f = (name: string, type: string, extra: Field = {}): Field => ({ name, type, required: false, ...extra })

/** A collection with a required title, a status enum and one closed record. */
async function tickets() {
  const name = freshName('tickets')
  const fields = [
    f('title', 'text', { required: true }),
    f('status', 'enum', { enumValues: ['open', 'waiting', 'closed'] }),
  ]
  await createCollection(server, owner.token, name, fields)
  await createRecord(server, owner.token, name, { title: 'a', status: 'closed' })
  return { name, fields }
}

describe('collection.update', () => {
  it('a PATCH publishes one event after it committed: the new schema version, the changes, the principal', async () => {
    const { name, fields } = await tickets()
    const status = f('status', 'enum', { enumValues: ['open', 'waiting'] })
    const reply = await patch(name, {
      fields: [fields[0], status, f('notes', 'text')],
      enumChanges: { status: { closed: 'open' } },
      indexes: [{ fields: ['status', '-title'] }],
    })
    expect(reply.status, reply.text).toBe(200)
    const [one, ...more] = await eventsOf(name, 1)
    expect(more).toEqual([])
    const { event, readBack } = one!
    expect(event).toEqual({
      projectId: reply.body.data.projectId,
      collection: name,
      schemaVersion: reply.body.data.schemaVersion,
      changes: {
        added: ['notes'],
        indexToggled: [],
        fields: [
          {
            kind: 'enumValues',
            field: 'status',
            before: expect.objectContaining({ name: 'status', enumValues: ['open', 'waiting', 'closed'] }),
            after: expect.objectContaining({ name: 'status', enumValues: ['open', 'waiting'] }),
          },
        ],
        enumChanges: { status: { closed: 'open' } },
        indexesAdded: [expect.any(String)],
        indexesDropped: [],
      },
      principal: { id: owner.id, kind: 'user', role: owner.role },
      at: expect.any(Number),
    })
    expect(event.projectId).toMatch(/^[0-9a-f]{32}$/)
    expect(event.schemaVersion).toBeGreaterThan(1)
    // Published after the commit: a handler reading the collection finds the new version.
    expect(readBack).toEqual({ status: 200, schemaVersion: event.schemaVersion })
    // The payload is plain JSON (what a flow and any copy get).
    expect(JSON.parse(JSON.stringify(event))).toEqual(event)
  })

  it('names each kind of field change, and the index dropped', async () => {
    const { name, fields } = await tickets()
    const indexed = await patch(name, { fields, indexes: [{ fields: ['status', '-title'] }] })
    expect(indexed.status, indexed.text).toBe(200)
    const [, ...rest] = fields
    const reply = await patch(name, {
      fields: [{ ...fields[0], required: false, label: 'Title' }, ...rest],
      indexes: [],
    })
    expect(reply.status, reply.text).toBe(200)
    const [, second] = await eventsOf(name, 2)
    expect(second!.event.schemaVersion).toBe(reply.body.data.schemaVersion)
    expect(second!.event.changes).toMatchObject({
      added: [],
      indexesAdded: [],
      indexesDropped: [expect.any(String)],
    })
    expect(second!.event.changes.fields.map((c) => [c.kind, c.field]).sort()).toEqual([
      ['label', 'title'],
      ['required', 'title'],
    ])
    expect(second!.event.changes).not.toHaveProperty('enumChanges')
  })

  it('a refused PATCH (409, 400, 403) publishes nothing', async () => {
    const { name, fields } = await tickets()
    // 409: a removed value that a record holds, with no enumChanges to map it.
    expectError(
      await patch(name, { fields: [fields[0], f('status', 'enum', { enumValues: ['open'] })] }),
      409,
      'conflict',
    )
    // 400: an existing field missing from the array.
    expectError(await patch(name, { fields: [fields[0]] }), 400, 'invalid_field')
    // 403: an editor may write records, not change the schema.
    expectError(await patch(name, { fields: [...fields, f('extra', 'text')] }, editor.token), 403, 'forbidden')
    // Events go out in commit order: once this accepted PATCH's event is here, a refused one's would be too.
    const accepted = await patch(name, { fields: [...fields, f('late', 'text')] })
    expect(accepted.status, accepted.text).toBe(200)
    const events = await eventsOf(name, 1)
    expect(events.map((e) => e.event.changes.added)).toEqual([['late']])
  })

  it('holds no secret: the principal is a snapshot, an API key is named by its id, never its raw key', async () => {
    const { name, fields } = await tickets()
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'schema key', capabilities: ['schema/*:update', 'schema/*:read'] },
    })
    expect(key.status, key.text).toBe(201)
    const { id, raw } = key.body as { id: string; raw: string }
    const reply = await patch(name, { fields: [...fields, f('by_key', 'text')] }, raw)
    expect(reply.status, reply.text).toBe(200)
    const byOwner = await patch(name, { fields: [...fields, f('by_key', 'text'), f('by_owner', 'text')] })
    expect(byOwner.status, byOwner.text).toBe(200)
    const [first, second] = await eventsOf(name, 2)
    expect(first!.event.principal).toEqual({ id, kind: 'api_key', role: 'api' })
    expect(second!.event.principal).toEqual({ id: owner.id, kind: 'user', role: owner.role })
    const text = JSON.stringify([first!.event, second!.event])
    for (const secret of [raw, raw.slice(3), owner.token, owner.password, owner.email])
      expect(text).not.toContain(secret)
    expect(Object.keys(first!.event).sort()).toEqual([
      'at',
      'changes',
      'collection',
      'principal',
      'projectId',
      'schemaVersion',
    ])
  })
})

describe('app_event flows on collection.update', () => {
  const BASE = '/api/v1/automate'
  /** A step that records `$trigger` in its output, so a run's detail shows what started it. */
  const echo = { key: 'seen', type: 'set_variable', config: { key: 'seen', value: '{{= $trigger }}' } }

  it('a flow listening to collection.update runs once per accepted PATCH with the event as $trigger.body', async () => {
    const created = await server.request('POST', `${BASE}/flows`, {
      token: owner.token,
      body: {
        name: 'schema watcher',
        triggerType: 'app_event',
        triggerConfig: { events: ['collection.update'] },
        operations: [echo],
      },
    })
    expect(created.status, created.text).toBe(201)
    const flowId: string = created.body.data.id
    for (const [path, method, body] of [
      [`${BASE}/flows/${flowId}/publish`, 'POST', { changeSummary: 'first' }],
      [`${BASE}/flows/${flowId}/status`, 'PATCH', { status: 'active' }],
    ] as const) {
      const reply = await server.request(method, path, { token: owner.token, body })
      expect(reply.status, reply.text).toBe(200)
    }
    const { name, fields } = await tickets()
    expectError(await patch(name, { fields: [fields[0]] }), 400, 'invalid_field')
    const reply = await patch(name, { fields: [...fields, f('flowed', 'text')] })
    expect(reply.status, reply.text).toBe(200)
    const [{ event }] = (await eventsOf(name, 1)) as [(typeof seen)[number]]

    const deadline = Date.now() + 10_000
    let runs: { runId: string; status: string }[]
    for (;;) {
      const listed = await server.request('GET', `${BASE}/runs?flow_id=${flowId}&limit=10`, { token: owner.token })
      expect(listed.status, listed.text).toBe(200)
      runs = listed.body.data
      if (runs.length > 0 && runs.every((r) => !['pending', 'running'].includes(r.status))) break
      if (Date.now() > deadline) throw new Error(`no finished run: ${JSON.stringify(runs)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    // One run: the refused PATCH started none (its event would have come first).
    expect(runs).toHaveLength(1)
    const run = (await server.request('GET', `${BASE}/runs/${runs[0]!.runId}`, { token: owner.token })).body.data
    expect(run.status).toBe('completed')
    const trigger = run.stepLogs.find((log: any) => log.key === 'seen')?.output
    expect(trigger).toEqual({
      event: 'collection.update',
      collection: null,
      method: null,
      body: JSON.parse(JSON.stringify(event)),
    })
    expect(run.actingAs).toMatchObject({ userId: owner.id })
  })
})
