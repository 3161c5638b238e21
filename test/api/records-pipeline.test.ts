import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { AppError } from '../../src/lib/errors.js'
import type { BeforeWrite, RecordEvent } from '../../src/modules/records/index.js'
import { builderEventNames } from '../../src/modules/automate/triggers/app-event.js'
import { documentedEvents, eventShape } from '../support/documented-events.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { someBytes } from './files-support.js'
import { placeShape, settle, structurePath } from './structure-support.js'
import {
  client,
  createCollection,
  createRecord,
  expectError,
  freshName,
  listAll,
  readRecord,
  recordsPath,
} from './records-fixtures.js'

// The one records write pipeline (decision 021): blocking hooks run exactly once per logical write,
// outside any retry and before anything of the request is written; events carry the principal snapshot.

let server: TestServer
let owner: Account
let editor: Account
const { patch, post, del } = client(() => server)

const noteFields = [
  { name: 'title', type: 'text', required: true },
  { name: 'count', type: 'integer', required: false },
  { name: 'slug', type: 'text', required: false },
  { name: 'tags', type: 'json', required: false },
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

let removals: (() => void)[] = []
afterEach(() => {
  for (const remove of removals) remove()
  removals = []
})

/** A hook on these collections that notes every call (and may act on it); removed after the test. */
function hook(
  collections: readonly string[],
  act: (write: BeforeWrite) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void = () => {},
): BeforeWrite[] {
  const calls: BeforeWrite[] = []
  removals.push(
    server.app.records.hooks.add((write) => {
      if (!collections.includes(write.collection.name)) return
      calls.push(write)
      return act(write)
    }),
  )
  return calls
}

/** Every event of these collections, in publication order; stops after the test. */
function listen(collections: readonly string[]): { type: string; event: RecordEvent }[] {
  const seen: { type: string; event: RecordEvent }[] = []
  for (const type of ['record.create', 'record.update', 'record.delete'] as const) {
    removals.push(
      server.app.events.on(
        type,
        (event) => void (collections.includes(event.collection) && seen.push({ type, event })),
      ),
    )
  }
  return seen
}

/**
 * Holds every caller in the hook until `count` have arrived, so all of them read the record before any
 * writes it. The fallback release only keeps a broken pipeline from hanging the test (its counts then fail).
 */
function barrier(count: number): () => Promise<void> {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  const fallback = setTimeout(open, 10_000)
  return async () => {
    if (++arrived >= count) {
      clearTimeout(fallback)
      open()
    }
    await opened
  }
}

const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort()

/** The record as the owner sees it (soft-deleted ones too), or null when it is gone. */
async function stored(collection: string, id: string): Promise<Record<string, any> | null> {
  const reply = await server.request('GET', recordsPath(collection, id, { include_deleted: 'true' }), {
    token: owner.token,
  })
  if (reply.status === 404) return null
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

describe('hooks run once per logical write', () => {
  it.each([
    {
      how: '_version in the body',
      headers: (_v: number) => ({}),
      body: (i: number, v: number) => ({ count: i, _version: v }),
      lost: 409,
    },
    {
      how: 'If-Match',
      headers: (v: number) => ({ 'If-Match': String(v) }),
      body: (i: number) => ({ count: i }),
      lost: 412,
    },
  ])(
    '20 concurrent updates holding the same version ($how): one hook call per request, one wins, the others $lost',
    async ({ headers, body, lost }) => {
      const name = await createCollection(server, owner.token, freshName('race'), noteFields)
      const record = await createRecord(server, owner.token, name, { title: 'contended', count: 0 })
      const wait = barrier(20)
      const calls = hook([name], wait)
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          patch(recordsPath(name, record.id), editor.token, body(i + 1, record._version), headers(record._version)),
        ),
      )
      // "Once per write": every request that got past validation (here all 20: each read the record at its
      // version before any of them wrote) ran the hooks exactly once; none ran them again.
      expect(calls).toHaveLength(20)
      expect(new Set(calls.map((c) => c.data.count)).size).toBe(20)
      expect(calls.every((c) => c.before?._version === record._version && c.principal.userId === editor.id)).toBe(true)
      expect(statuses(replies)).toEqual([200, ...Array<number>(19).fill(lost)])
      const winner = replies.find((r) => r.status === 200)!
      expect(await readRecord(server, owner.token, name, record.id)).toMatchObject({
        count: winner.body.count,
        _version: record._version + 1,
      })
    },
  )

  it('20 concurrent updates without a version: each request runs the hooks once, and every change lands', async () => {
    const name = await createCollection(server, owner.token, freshName('retry'), noteFields)
    const record = await createRecord(server, owner.token, name, { title: 'busy', tags: [] })
    const wait = barrier(20)
    const calls = hook([name], async (write) => {
      await wait()
      return { ...write.data, slug: 'set by the hook' }
    })
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        patch(recordsPath(name, record.id), editor.token, { $push: { tags: `t${i}` } }),
      ),
    )
    expect(statuses(replies)).toEqual(Array<number>(20).fill(200))
    // All 20 read the record at version 1, so 19 lost the race and were written again: without the hooks.
    expect(calls).toHaveLength(20)
    expect(calls.every((c) => c.before?._version === 1)).toBe(true)
    const after = await readRecord(server, owner.token, name, record.id)
    // The operators were recomputed on the record as it was at each retry: no push was lost.
    expect([...after.tags].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`).sort())
    expect(after).toMatchObject({ slug: 'set by the hook', _version: 21 })
  })

  it('a retry does not silently drop a hook’s change to a value an operator computes: 409', async () => {
    const name = await createCollection(server, owner.token, freshName('opfight'), noteFields)
    const record = await createRecord(server, owner.token, name, { title: 'x', tags: [] })
    const wait = barrier(2)
    hook([name], async (write) => {
      await wait()
      return { ...write.data, tags: ['rewritten by the hook'] }
    })
    const replies = await Promise.all(
      [0, 1].map((i) => patch(recordsPath(name, record.id), owner.token, { $push: { tags: `t${i}` } })),
    )
    expect(statuses(replies)).toEqual([200, 409])
    expect(replies.find((r) => r.status === 409)!.body.details).toEqual({ field: 'tags' })
    expect((await readRecord(server, owner.token, name, record.id)).tags).toEqual(['rewritten by the hook'])
  })

  it('bulk delete: one call per record; a refusal of one deletes none', async () => {
    const name = await createCollection(server, owner.token, freshName('bulk'), noteFields)
    const ids = await Promise.all(
      ['a', 'b', 'c'].map(async (title) => (await createRecord(server, owner.token, name, { title })).id as string),
    )
    const refusing = hook([name], (write) => {
      if (write.before?.title === 'b') throw new AppError('validation_error', 'b stays', { field: 'title' })
    })
    const refused = await server.request('DELETE', `${recordsPath(name)}/bulk?permanent=true`, {
      token: owner.token,
      body: { ids },
    })
    expectError(refused, 422, 'validation_error')
    expect(refused.body.details).toEqual({ field: 'title' })
    // The hooks stop at the refusal, before anything is written; no record was hooked twice.
    expect(refusing.at(-1)!.before?.title).toBe('b')
    expect(new Set(refusing.map((c) => c.before?.id)).size).toBe(refusing.length)
    expect(await listAll(server, owner.token, name)).toHaveLength(3)
    removals.shift()!()

    const calls = hook([name])
    const reply = await server.request('DELETE', `${recordsPath(name)}/bulk?permanent=true`, {
      token: owner.token,
      body: { ids },
    })
    expect(reply.body).toEqual({ deleted: 3 })
    expect(calls.map((c) => [c.action, c.before?.id]).sort()).toEqual(ids.map((id) => ['delete', id]).sort())
  })

  it('import: one call per line; a refused line alone is left out, nothing of it written', async () => {
    const name = await createCollection(server, owner.token, freshName('import'), noteFields)
    const calls = hook([name], (write) => {
      if (write.data.title === 'veto') throw new AppError('forbidden', 'No vetoes')
      return { ...write.data, slug: `hooked-${String(write.data.title)}` }
    })
    const body = ['one', 'veto', 'three'].map((title) => JSON.stringify({ title })).join('\n')
    const reply = await server.request('POST', `${recordsPath(name)}/import-ndjson`, {
      token: owner.token,
      rawBody: body,
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({
      imported: 2,
      failed: 1,
      errors: [{ line: 2, code: 'forbidden', message: 'No vetoes' }],
    })
    expect(calls.map((c) => [c.action, c.data.title, c.before])).toEqual([
      ['create', 'one', null],
      ['create', 'veto', null],
      ['create', 'three', null],
    ])
    const rows = await listAll(server, owner.token, name)
    expect(rows.map((r) => [r.title, r.slug]).sort()).toEqual([
      ['one', 'hooked-one'],
      ['three', 'hooked-three'],
    ])
  })

  it('transfer: one call, as an update of owned_by with the record before; a refusal leaves the owner', async () => {
    const name = await createCollection(server, owner.token, freshName('handover'), noteFields)
    const record = await createRecord(server, owner.token, name, { title: 'mine' })
    const refusing = hook([name], () => {
      throw new AppError('forbidden', 'Not today')
    })
    const path = `${recordsPath(name, record.id)}/transfer`
    expectError(await post(path, owner.token, { userId: editor.id }), 403, 'forbidden')
    expect(refusing).toHaveLength(1)
    expect(await stored(name, record.id)).toEqual(record)
    removals.shift()!()

    const calls = hook([name])
    const reply = await post(path, owner.token, { userId: editor.id })
    expect(reply.status, reply.text).toBe(200)
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      action: 'update',
      before: { id: record.id, owned_by: null, _version: 1 },
      data: { owned_by: editor.id },
    })
    expect((await stored(name, record.id))!.owned_by).toBe(editor.id)
  })

  it('restore: one call with action restore and the deleted record', async () => {
    const name = await createCollection(server, owner.token, freshName('restore'), noteFields)
    const record = await createRecord(server, owner.token, name, { title: 'back' })
    expect((await del(recordsPath(name, record.id), owner.token)).status).toBe(200)
    const calls = hook([name], () => {
      throw new AppError('conflict', 'Stays deleted')
    })
    expectError(await post(`${recordsPath(name, record.id)}/restore`, owner.token), 409, 'conflict')
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      action: 'restore',
      before: { id: record.id, deleted_at: expect.any(Number) },
      data: {},
    })
    expect((await stored(name, record.id))!.deleted_at).toEqual(expect.any(Number))
  })
})

describe('structure repairs', () => {
  it('a repair job writes through the pipeline: one hook call per repaired record; a refused record is a failure, left as it was', async () => {
    const name = await createCollection(server, owner.token, freshName('repairs'), [
      { name: 'title', type: 'text', required: false },
      { name: 'meta', type: 'json', required: false, structure: { enforcement: 'warn', shape: placeShape } },
    ])
    const fixed = await createRecord(server, owner.token, name, { title: 'fix me', meta: { kind: 'City' } })
    const refused = await createRecord(server, owner.token, name, { title: 'leave me', meta: { kind: 'City' } })
    const calls = hook([name], (write) => {
      if (write.before?.title === 'leave me') throw new AppError('forbidden', 'Hands off')
    })
    const started = await post(structurePath(name, 'meta', 'repair-jobs'), owner.token, {
      fixes: [{ kind: 'enum', path: 'kind', from: 'City', to: 'city' }],
    })
    expect(started.status, started.text).toBe(202)
    const done = await settle(server, owner.token, name, 'repair', started.body.data.jobId)
    expect(done.repair).toMatchObject({
      repaired: 1,
      failed: 1,
      failures: [{ id: refused.id, reason: expect.stringContaining('Hands off') }],
    })
    expect(calls.map((c) => [c.action, c.before?.id, c.data]).sort()).toEqual(
      [
        ['update', fixed.id, { meta: { kind: 'city' } }],
        ['update', refused.id, { meta: { kind: 'city' } }],
      ].sort(),
    )
    expect((await stored(name, fixed.id))!.meta).toEqual({ kind: 'city' })
    expect(await stored(name, refused.id)).toEqual(refused)
  })
})

describe('relation cascades', () => {
  /** A parent with two cascading children, a set-null link and a hasMany list naming it and another parent. */
  async function family() {
    const parents = await createCollection(server, owner.token, freshName('parents'), [
      { name: 'name', type: 'text', required: true },
    ])
    const kids = await createCollection(server, owner.token, freshName('kids'), [
      { name: 'name', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'cascade' },
      },
    ])
    const links = await createCollection(server, owner.token, freshName('links'), [
      { name: 'name', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'set-null' },
      },
    ])
    const lists = await createCollection(server, owner.token, freshName('lists'), [
      { name: 'name', type: 'text', required: true },
      {
        name: 'members',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'hasMany', onDelete: 'set-null' },
      },
    ])
    const parent = await createRecord(server, owner.token, parents, { name: 'p' })
    const other = await createRecord(server, owner.token, parents, { name: 'other' })
    const kid1 = await createRecord(server, owner.token, kids, { name: 'k1', parent: parent.id })
    const kid2 = await createRecord(server, owner.token, kids, { name: 'k2', parent: parent.id })
    const link = await createRecord(server, owner.token, links, { name: 'l', parent: parent.id })
    const list = await createRecord(server, owner.token, lists, { name: 'm', members: [parent.id, other.id] })
    return { names: [parents, kids, links, lists], parents, kids, links, lists, parent, other, kid1, kid2, link, list }
  }

  it('a permanent delete runs the hooks once for every record it deletes or clears, before writing any', async () => {
    const f = await family()
    const seen = listen(f.names)
    const calls = hook(f.names)
    expect((await del(recordsPath(f.parents, f.parent.id, { permanent: 'true' }), editor.token)).status).toBe(200)
    expect(calls.map((c) => `${c.action} ${c.collection.name} ${String(c.before?.id)}`).sort()).toEqual(
      [
        `delete ${f.parents} ${f.parent.id}`,
        `delete ${f.kids} ${f.kid1.id}`,
        `delete ${f.kids} ${f.kid2.id}`,
        `update ${f.links} ${f.link.id}`,
        `update ${f.lists} ${f.list.id}`,
      ].sort(),
    )
    // Every call is the deleting caller's, and the clean-ups are told what they write.
    expect(calls.every((c) => c.principal.userId === editor.id)).toBe(true)
    expect(calls.find((c) => c.collection.name === f.links)!.data).toEqual({ parent: null })
    expect(calls.find((c) => c.collection.name === f.lists)!.data).toEqual({ members: [f.other.id] })
    expect(await stored(f.kids, f.kid1.id)).toBeNull()
    expect((await stored(f.links, f.link.id))!.parent).toBeNull()
    expect((await stored(f.lists, f.list.id))!.members).toEqual([f.other.id])
    // The cascade's events name the deleting caller and, for the clean-ups, what changed.
    await vi.waitFor(() => expect(seen).toHaveLength(5))
    const linkUpdate = seen.find((s) => s.event.collection === f.links)!
    expect(linkUpdate).toMatchObject({
      type: 'record.update',
      event: {
        changes: { parent: { before: f.parent.id, after: null } },
        principal: { id: editor.id, kind: 'user', role: 'editor' },
      },
    })
    expect(seen.filter((s) => s.type === 'record.delete').map((s) => s.event.permanent)).toEqual([true, true, true])
  })

  it('a hook refusing one record mid-cascade leaves every record as it was', async () => {
    const f = await family()
    const seen = listen(f.names)
    const calls = hook(f.names, (write) => {
      if (write.action === 'delete' && write.before?.name === 'k2') throw new AppError('forbidden', 'k2 is protected')
    })
    const reply = await del(recordsPath(f.parents, f.parent.id, { permanent: 'true' }), owner.token)
    expectError(reply, 403, 'forbidden')
    expect(reply.body.message).toBe('k2 is protected')
    expect(calls.length).toBeGreaterThanOrEqual(2)
    for (const [collection, record] of [
      [f.parents, f.parent],
      [f.kids, f.kid1],
      [f.kids, f.kid2],
      [f.links, f.link],
      [f.lists, f.list],
    ] as const) {
      expect(await stored(collection, record.id)).toEqual(record)
    }
    // The same refusal through a bulk delete.
    const bulk = await server.request('DELETE', `${recordsPath(f.parents)}/bulk?permanent=true`, {
      token: owner.token,
      body: { ids: [f.parent.id, f.other.id] },
    })
    expectError(bulk, 403, 'forbidden')
    expect(await stored(f.parents, f.other.id)).toEqual(f.other)
    expect(await stored(f.lists, f.list.id)).toEqual(f.list)
    expect(await stored(f.kids, f.kid1.id)).toEqual(f.kid1)
    await createRecord(server, owner.token, f.parents, { name: 'marker' })
    await vi.waitFor(() => expect(seen).toHaveLength(1))
    expect(seen[0]!.type).toBe('record.create')
  })

  it('a bulk delete of two parents clears a list naming both in one write, hooked once', async () => {
    const f = await family()
    const calls = hook([f.lists])
    const reply = await server.request('DELETE', `${recordsPath(f.parents)}/bulk?permanent=true`, {
      token: owner.token,
      body: { ids: [f.parent.id, f.other.id] },
    })
    expect(reply.body).toEqual({ deleted: 2 })
    expect(calls).toHaveLength(1)
    expect(calls[0]!.data).toEqual({ members: [] })
    expect(await stored(f.lists, f.list.id)).toMatchObject({ members: [], _version: 2 })
  })

  it('a hook may change what a clean-up writes', async () => {
    const f = await family()
    hook([f.links], (write) => ({ ...write.data, name: 'orphaned' }))
    expect((await del(recordsPath(f.parents, f.parent.id, { permanent: 'true' }), owner.token)).status).toBe(200)
    expect(await stored(f.links, f.link.id)).toMatchObject({ name: 'orphaned', parent: null })
  })
})

describe('hooks change values; refusals write nothing', () => {
  it('a create and an update store what the hook returned', async () => {
    const name = await createCollection(server, owner.token, freshName('change'), noteFields)
    hook([name], (write) => ({ ...write.data, slug: String(write.data.title ?? write.before?.title).toLowerCase() }))
    const created = await createRecord(server, owner.token, name, { title: 'Hello' })
    expect(created.slug).toBe('hello')
    const updated = await patch(recordsPath(name, created.id), owner.token, { title: 'World' })
    expect(updated.body).toMatchObject({ title: 'World', slug: 'world' })
    expect(await readRecord(server, owner.token, name, created.id)).toEqual(updated.body)
  })

  it('a refused create, update or delete answers the hook’s error and leaves the data as it was', async () => {
    const name = await createCollection(server, owner.token, freshName('refuse'), noteFields)
    const record = await createRecord(server, owner.token, name, { title: 'kept', count: 1 })
    hook([name], () => {
      throw new AppError('validation_error', 'Frozen', { reason: 'frozen' })
    })
    const created = await post(recordsPath(name), owner.token, { title: 'new' })
    expectError(created, 422, 'validation_error')
    expect(created.body).toEqual({ error: 'validation_error', message: 'Frozen', details: { reason: 'frozen' } })
    expectError(await patch(recordsPath(name, record.id), owner.token, { count: 2 }), 422, 'validation_error')
    expectError(await del(recordsPath(name, record.id, { permanent: 'true' }), owner.token), 422, 'validation_error')
    expectError(await del(recordsPath(name, record.id), owner.token), 422, 'validation_error')
    expect(await listAll(server, owner.token, name, { include_deleted: 'true' })).toEqual([record])
  })
})

describe('events', () => {
  it('carry the principal snapshot, and an update the fields it changed with their previous values', async () => {
    const name = await createCollection(server, owner.token, freshName('events'), noteFields)
    const seen = listen([name])
    const record = await createRecord(server, editor.token, name, { title: 'a', count: 1, tags: ['x'] })
    await patch(recordsPath(name, record.id), editor.token, { count: 2, title: 'a', $push: { tags: 'y' } })
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'pipeline', capabilities: [`collections/${name}:delete`] },
    })
    expect(key.status, key.text).toBe(201)
    expect((await del(recordsPath(name, record.id), key.body.raw)).status).toBe(200)
    expect((await post(`${recordsPath(name, record.id)}/restore`, owner.token)).status).toBe(200)
    await vi.waitFor(() => expect(seen).toHaveLength(4))
    const [create, update, remove, restore] = seen.map((s) => s.event)
    expect(create!.principal).toEqual({ id: editor.id, kind: 'user', role: 'editor' })
    expect(create).not.toHaveProperty('changes')
    expect(update!.changes).toEqual({ count: { before: 1, after: 2 }, tags: { before: ['x'], after: ['x', 'y'] } })
    expect(remove).toMatchObject({ permanent: false, principal: { id: key.body.id, kind: 'api_key', role: 'api' } })
    expect(restore!.changes).toEqual({ deleted_at: { before: expect.any(Number), after: null } })
    expect(restore!.principal).toEqual({ id: owner.id, kind: 'user', role: owner.role })
    // The full principal never travels with a copy of the event.
    expect(JSON.stringify(seen.map((s) => s.event))).not.toMatch(/sessionId|capabilities|homeProjectId/)
  })
})

describe('docs/events.md documents exactly what is emitted', () => {
  const documented = documentedEvents()
  const shape = eventShape
  const asPublished = (event: unknown) => JSON.parse(JSON.stringify(event)) as Record<string, unknown>

  it('documents the six events and the builder resources', () => {
    expect([...documented.keys()].sort()).toEqual(
      [
        'collection.update',
        'file.upload',
        'record.create',
        'record.delete',
        'record.update',
        'user.login',
        ...builderEventNames,
      ].sort(),
    )
  })

  it('record.create, record.update and record.delete have the documented keys', async () => {
    const name = await createCollection(server, owner.token, freshName('doc'), noteFields)
    const seen = listen([name])
    const record = await createRecord(server, owner.token, name, { title: 'a' })
    await patch(recordsPath(name, record.id), owner.token, { count: 3 })
    await del(recordsPath(name, record.id), owner.token)
    await vi.waitFor(() => expect(seen).toHaveLength(3))
    for (const { type, event } of seen) {
      const published = asPublished(event)
      const example = documented.get(type)!
      expect(Object.keys(published).sort(), type).toEqual(Object.keys(example).sort())
      expect({ ...(shape(published) as object), changes: undefined }, type).toEqual({
        ...(shape(example) as object),
        changes: undefined,
      })
    }
  })

  it('user.login and file.upload have the documented keys', async () => {
    const logins: unknown[] = []
    const uploads: unknown[] = []
    removals.push(server.app.events.on('user.login', (e) => void logins.push(e)))
    removals.push(server.app.events.on('file.upload', (e) => void uploads.push(e)))
    const signIn = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: editor.email, password: editor.password },
    })
    expect(signIn.status, signIn.text).toBe(200)
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(someBytes(64))], { type: 'application/octet-stream' }), 'doc.bin')
    const upload = await fetch(`${server.url}/api/v1/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: form,
    })
    expect(upload.status, await upload.clone().text()).toBe(201)
    await vi.waitFor(() => expect([logins.length, uploads.length]).toEqual([1, 1]))
    expect(shape(asPublished(logins[0]))).toEqual(shape(documented.get('user.login')))
    expect(asPublished(logins[0])).toMatchObject({
      userId: editor.id,
      method: 'email',
      principal: { id: editor.id, kind: 'user', role: 'editor' },
    })
    expect(shape(asPublished(uploads[0]))).toEqual(shape(documented.get('file.upload')))
    const file = (asPublished(uploads[0]) as { file: Record<string, unknown> }).file
    expect(Object.keys(file).sort()).toEqual(Object.keys(documented.get('file.upload')!.file as object).sort())
  })

  it('collection.update has the documented keys', async () => {
    const updates: unknown[] = []
    removals.push(server.app.events.on('collection.update', (e) => void updates.push(e)))
    const name = await createCollection(server, owner.token, freshName('doc'), noteFields)
    const reply = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: [...noteFields, { name: 'extra', type: 'text', required: false }] },
    })
    expect(reply.status, reply.text).toBe(200)
    await vi.waitFor(() => expect(updates).toHaveLength(1))
    const published = asPublished(updates[0]) as Record<string, unknown>
    const example = documented.get('collection.update')!
    expect(Object.keys(published).sort()).toEqual(Object.keys(example).sort())
    expect(Object.keys(published.changes as object).sort()).toEqual(
      Object.keys(example.changes as object)
        .filter((k) => (published.changes as Record<string, unknown>)[k] !== undefined)
        .sort(),
    )
  })
})
