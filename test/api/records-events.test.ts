import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { AppError } from '../../src/lib/errors.js'
import type { BeforeWrite, RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
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

let server: TestServer
let owner: Account
let editor: Account
const { get, post, patch, del } = client(() => server)

type EventType = 'record.create' | 'record.update' | 'record.delete'
interface Seen {
  type: EventType
  event: RecordEvent
  /** What a client read of the record answered while the handler ran (the write had committed by then). */
  readBack?: { status: number; data: Record<string, any> | undefined }
}

const seen: Seen[] = []
const stops: (() => void)[] = []
const notes = 'notes'
const parents = 'parents'
const children = 'children'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  await createCollection(server, owner.token, notes, [
    { name: 'title', type: 'text', required: true },
    { name: 'count', type: 'integer', required: false },
    { name: 'slug', type: 'text', required: false },
    { name: 'locked', type: 'boolean', required: false },
  ])
  await createCollection(server, owner.token, parents, [{ name: 'name', type: 'text', required: true }])
  await createCollection(server, owner.token, children, [
    { name: 'name', type: 'text', required: true },
    {
      name: 'parent',
      type: 'relation',
      required: false,
      relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'cascade' },
    },
  ])
  for (const type of ['record.create', 'record.update', 'record.delete'] as const) {
    stops.push(
      server.app.events.on(type, async (event) => {
        // Noted at once, so `seen` is in publication order; the read back fills in later.
        const entry: Seen = { type, event }
        seen.push(entry)
        const id = String((event.after ?? event.before)!.id)
        const reply = await server.request(
          'GET',
          recordsPath(event.collection, id, { include_deleted: 'true', locale: '*' }),
          { token: owner.token },
        )
        entry.readBack = { status: reply.status, data: reply.body?.data }
      }),
    )
  }
})
afterAll(async () => {
  for (const stop of stops) stop()
  await server?.stop()
})

/** The events of one record, once `count` of them have arrived and been read back. */
async function eventsOf(id: string, count: number): Promise<Seen[]> {
  const mine = () => seen.filter((s) => (s.event.after ?? s.event.before)?.id === id)
  await vi.waitFor(
    () => {
      expect(mine().length).toBeGreaterThanOrEqual(count)
      expect(mine().every((s) => s.readBack !== undefined)).toBe(true)
    },
    { timeout: 5000, interval: 10 },
  )
  return mine()
}

/**
 * A write that succeeds after the ones under test; once its event has arrived, every event the earlier
 * writes would have published has arrived too (handlers run in publication order).
 */
async function settle(): Promise<void> {
  const marker = await createRecord(server, owner.token, notes, { title: 'marker' })
  await eventsOf(marker.id, 1)
}

describe('record events (after commit, with before and after)', () => {
  it('create publishes record.create: before null, after the stored record, the actor', async () => {
    const created = await createRecord(server, owner.token, notes, { title: 'hello', count: 1 })
    const [only, ...rest] = await eventsOf(created.id, 1)
    expect(rest).toEqual([])
    expect(only!.type).toBe('record.create')
    expect(only!.event).toEqual({
      projectId: server.app.defaultProject.id,
      collection: notes,
      before: null,
      after: created,
      principal: { id: owner.id, kind: 'user', role: owner.role },
      at: expect.any(Number),
    })
    // Published after commit: a read from the handler finds it.
    expect(only!.readBack).toEqual({ status: 200, data: created })
  })

  it('update publishes record.update with the record before and after', async () => {
    const created = await createRecord(server, owner.token, notes, { title: 'before', count: 1 })
    const reply = await patch(recordsPath(notes, created.id), editor.token, { title: 'after' })
    expect(reply.status, reply.text).toBe(200)
    const events = await eventsOf(created.id, 2)
    const update = events.find((e) => e.type === 'record.update')!
    expect(update.event).toMatchObject({
      collection: notes,
      before: created,
      after: reply.body,
      principal: { id: editor.id, kind: 'user', role: 'editor' },
    })
    expect(update.event.after).toMatchObject({ title: 'after', _version: 2 })
    expect(update.readBack).toEqual({ status: 200, data: reply.body })
  })

  it('a soft delete publishes record.delete with before and no after; a read then finds it deleted', async () => {
    const created = await createRecord(server, owner.token, notes, { title: 'doomed' })
    expect((await del(recordsPath(notes, created.id), owner.token)).status).toBe(200)
    const remove = (await eventsOf(created.id, 2)).find((e) => e.type === 'record.delete')!
    expect(remove.event).toMatchObject({
      collection: notes,
      before: created,
      after: null,
      principal: { id: owner.id, kind: 'user', role: owner.role },
    })
    expect(remove.readBack!.status).toBe(200)
    expect(remove.readBack!.data!.deleted_at).toEqual(expect.any(Number))
  })

  it('a permanent delete publishes record.delete; a read then finds nothing', async () => {
    const created = await createRecord(server, owner.token, notes, { title: 'gone for good' })
    expect((await del(recordsPath(notes, created.id, { permanent: 'true' }), owner.token)).status).toBe(200)
    const remove = (await eventsOf(created.id, 2)).find((e) => e.type === 'record.delete')!
    expect(remove.event).toMatchObject({ before: created, after: null })
    expect(remove.readBack!.status).toBe(404)
  })

  it('restore publishes record.update from the deleted record to the restored one', async () => {
    const created = await createRecord(server, owner.token, notes, { title: 'phoenix' })
    await del(recordsPath(notes, created.id), owner.token)
    expect((await post(`${recordsPath(notes, created.id)}/restore`, owner.token)).status).toBe(200)
    const events = await eventsOf(created.id, 3)
    expect(events.map((e) => e.type)).toEqual(['record.create', 'record.delete', 'record.update'])
    const restore = events[2]!
    expect(restore.event.before).toMatchObject({ id: created.id, title: 'phoenix', deleted_at: expect.any(Number) })
    expect(restore.event.after).toMatchObject({ id: created.id, title: 'phoenix', deleted_at: null })
    expect(restore.readBack).toMatchObject({ status: 200, data: { deleted_at: null } })
  })

  it('a cascade publishes a record.delete for every record it removes', async () => {
    const parent = await createRecord(server, owner.token, parents, { name: 'p' })
    const child = await createRecord(server, owner.token, children, { name: 'c', parent: parent.id })
    expect((await del(recordsPath(parents, parent.id, { permanent: 'true' }), owner.token)).status).toBe(200)
    const childEvents = await eventsOf(child.id, 2)
    expect(childEvents.map((e) => e.type)).toEqual(['record.create', 'record.delete'])
    expect(childEvents[1]!.event).toMatchObject({ collection: children, before: child, after: null })
    expect(childEvents[1]!.readBack!.status).toBe(404)
  })

  it('a failed write publishes nothing', async () => {
    const record = await createRecord(server, owner.token, notes, { title: 'stable' })
    const parent = await createRecord(server, owner.token, parents, { name: 'kept' })
    const child = await createRecord(server, owner.token, children, { name: 'c', parent: parent.id })
    const guards = await createCollection(server, owner.token, freshName('guards'), [
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: parents, relationType: 'belongsTo', onDelete: 'restrict' },
      },
    ])
    await createRecord(server, owner.token, guards, { parent: parent.id })
    await settle()
    const from = seen.length
    expectError(await post(recordsPath(notes), owner.token, { count: 1 }), 400, 'missing_field')
    expectError(await post(recordsPath(notes), owner.token, { title: 'x', colour: 'red' }), 400, 'invalid_field')
    expectError(await post(recordsPath(notes), owner.token, { id: record.id, title: 'dup' }), 409, 'already_exists')
    expectError(
      await patch(recordsPath(notes, record.id), owner.token, { title: 'x' }, { 'If-Match': '9' }),
      412,
      'precondition_failed',
    )
    expectError(await patch(recordsPath(notes, record.id), owner.token, { title: 'x', _version: 9 }), 409, 'conflict')
    expectError(await patch(recordsPath(notes, record.id), owner.token, { count: 'many' }), 400, 'invalid_field')
    expectError(await patch(recordsPath(notes, 'f'.repeat(32)), owner.token, { title: 'x' }), 404, 'record_not_found')
    expectError(await del(recordsPath(notes, 'f'.repeat(32)), owner.token), 404, 'record_not_found')
    expectError(await post(`${recordsPath(notes, record.id)}/restore`, owner.token), 404, 'record_not_found')
    // Refused by restrict: neither the parent nor its cascading child publishes anything.
    expectError(await del(recordsPath(parents, parent.id, { permanent: 'true' }), owner.token), 409, 'conflict')
    expectError(await del(recordsPath(parents, parent.id), owner.token), 409, 'conflict')
    await settle()
    expect(seen.slice(from).map((s) => `${s.type} ${s.event.after?.title}`)).toEqual(['record.create marker'])
    expect(await readRecord(server, owner.token, notes, record.id)).toEqual(record)
    expect(await readRecord(server, owner.token, children, child.id)).toEqual(child)
  })
})

describe('blocking write hooks', () => {
  let remove: (() => void) | undefined
  afterEach(() => {
    remove?.()
    remove = undefined
  })

  it('a hook can change the data before it is stored; the response and later reads show it', async () => {
    const calls: BeforeWrite[] = []
    remove = server.app.records.hooks.add((write) => {
      if (write.collection.name !== notes) return
      calls.push(write)
      if (write.action === 'create') return { ...write.data, title: String(write.data.title).toUpperCase() }
      if (write.action === 'update' && typeof write.data.title === 'string')
        return { ...write.data, slug: write.data.title.toLowerCase().replace(/\s+/g, '-') }
    })
    const created = await post(recordsPath(notes), owner.token, { title: 'shout this' })
    expect(created.status, created.text).toBe(201)
    expect(created.body.title).toBe('SHOUT THIS')
    expect((await readRecord(server, owner.token, notes, created.body.id)).title).toBe('SHOUT THIS')
    expect(calls[0]).toMatchObject({
      action: 'create',
      before: null,
      data: { title: 'shout this' },
      principal: { userId: owner.id },
    })

    const updated = await patch(recordsPath(notes, created.body.id), owner.token, { title: 'Quiet Now' })
    expect(updated.status, updated.text).toBe(200)
    expect(updated.body).toMatchObject({ title: 'Quiet Now', slug: 'quiet-now', _version: 2 })
    expect(await readRecord(server, owner.token, notes, created.body.id)).toEqual(updated.body)
    // The hook saw the record as stored before the update.
    expect(calls[1]).toMatchObject({ action: 'update', before: created.body, data: { title: 'Quiet Now' } })
    // The events carry what was stored, not what was sent.
    const events = await eventsOf(created.body.id, 2)
    expect(events[0]!.event.after).toMatchObject({ title: 'SHOUT THIS' })
    expect(events[1]!.event.after).toMatchObject({ slug: 'quiet-now' })

    remove()
    remove = undefined
    const plain = await post(recordsPath(notes), owner.token, { title: 'as sent' })
    expect(plain.body.title).toBe('as sent')
  })

  it('a hook can reject a create with an AppError: the client sees it and nothing is written', async () => {
    remove = server.app.records.hooks.add((write) => {
      if (write.collection.name === notes && write.action === 'create' && write.data.title === 'nope') {
        throw new AppError('validation_error', 'Titles may not say nope', { field: 'title' })
      }
    })
    const before = (await listAll(server, owner.token, notes)).length
    const from = seen.length
    const reply = await post(recordsPath(notes), owner.token, { title: 'nope' })
    expectError(reply, 422, 'validation_error')
    expect(reply.body).toEqual({
      error: 'validation_error',
      message: 'Titles may not say nope',
      details: { field: 'title' },
    })
    expect(await listAll(server, owner.token, notes, { filter: JSON.stringify({ title: 'nope' }) })).toEqual([])
    // Other writes pass the same hook.
    expect((await post(recordsPath(notes), owner.token, { title: 'yes' })).status).toBe(201)
    await settle()
    expect(seen.slice(from).map((s) => s.event.after?.title)).toEqual(['yes', 'marker'])
    expect((await listAll(server, owner.token, notes)).length).toBe(before + 2)
  })

  it('a hook can reject an update: the record is unchanged, version and all', async () => {
    const record = await createRecord(server, owner.token, notes, { title: 'capped', count: 1 })
    await eventsOf(record.id, 1)
    remove = server.app.records.hooks.add((write) => {
      if (write.collection.name === notes && write.action === 'update' && Number(write.data.count) > 10) {
        throw new AppError('forbidden', 'count is capped at 10')
      }
    })
    const from = seen.length
    expectError(await patch(recordsPath(notes, record.id), owner.token, { count: 11 }), 403, 'forbidden')
    expect(await readRecord(server, owner.token, notes, record.id)).toEqual(record)
    expect((await patch(recordsPath(notes, record.id), owner.token, { count: 10 })).status).toBe(200)
    await settle()
    expect(seen.slice(from).map((s) => s.type)).toEqual(['record.update', 'record.create'])
  })

  it('a hook can reject a delete: the record stays', async () => {
    const record = await createRecord(server, owner.token, notes, { title: 'locked', locked: true })
    remove = server.app.records.hooks.add((write) => {
      if (write.collection.name === notes && write.action === 'delete' && write.before?.locked === true) {
        throw new AppError('conflict', 'This note is locked')
      }
    })
    expectError(await del(recordsPath(notes, record.id), owner.token), 409, 'conflict')
    expectError(await del(recordsPath(notes, record.id, { permanent: 'true' }), owner.token), 409, 'conflict')
    expect(await readRecord(server, owner.token, notes, record.id)).toEqual(record)
    expect((await get(recordsPath(notes, record.id), owner.token)).status).toBe(200)
  })
})
