import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/lib/errors.js'
import type { RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import {
  createCollection,
  createRecord,
  expectError,
  freshName,
  readRecord,
  recordId,
  recordsPath,
} from './records-fixtures.js'

// NDJSON import and import jobs (core-api § Record endpoints: Import NDJSON, Import jobs; § Import job;
// § Limits). Every line is a create: what is stored, and what is refused, is checked through the API.

const maxBody = 200_000
let server: TestServer
let owner: Account
let editor: Account
const items = 'items'
const itemFields = [
  { name: 'title', type: 'text', required: true },
  { name: 'count', type: 'integer', required: false },
  { name: 'code', type: 'text', required: false, unique: true },
  { name: 'note', type: 'text', required: false, validationRules: { maxLength: 10 } },
  { name: 'meta', type: 'json', required: false },
  { name: 'flag', type: 'boolean', required: false },
  { name: 'status', type: 'text', required: false, defaultValue: 'new' },
]

const ndjson = (...lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')

function importPath(collection: string, query: Record<string, string> = {}): string {
  const qs = new URLSearchParams(query).toString()
  return `/api/v1/collections/${collection}/records/import-ndjson${qs ? `?${qs}` : ''}`
}

function sendNdjson(
  collection: string,
  body: string,
  token?: string,
  query: Record<string, string> = {},
  type = 'application/x-ndjson',
): Promise<Reply> {
  return server.request('POST', importPath(collection, query), {
    token,
    rawBody: body,
    headers: { 'content-type': type },
  })
}

/** Every record of a collection (soft-deleted ones too), as the owner reads them. */
async function allRecords(collection: string, query: Record<string, string> = {}): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = []
  let cursor = ''
  for (;;) {
    const reply = await server.request(
      'GET',
      recordsPath(collection, undefined, { limit: 100, cursor, include_deleted: true, ...query }),
      { token: owner.token },
    )
    expect(reply.status, reply.text).toBe(200)
    out.push(...reply.body.data)
    if (!reply.body.cursors.next) return out
    cursor = reply.body.cursors.next
  }
}

const titles = async (collection: string) => (await allRecords(collection)).map((r) => r.title).sort()

let roleSeq = 0
/** A custom role with exactly these grants, and a signed-in account holding it. */
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `importer_${roleSeq++}`
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name } })
  expect(role.status, role.text).toBe(201)
  const put = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

beforeAll(async () => {
  server = await startServer({ MAX_BODY_BYTES: String(maxBody) })
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  await createCollection(server, owner.token, items, itemFields)
})
afterAll(async () => {
  await server?.stop()
})

describe('POST /records/import-ndjson', () => {
  it('stores every valid line and answers the stored records', async () => {
    const name = await createCollection(server, owner.token, freshName('plain'), itemFields)
    const reply = await sendNdjson(
      name,
      ndjson(
        { title: 'one', count: 1, meta: { a: [1, 2] }, flag: true },
        { title: 'two', code: 'C2' },
        { title: 'three', status: 'done' },
      ),
      owner.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({
      imported: 3,
      failed: 0,
      total: 3,
      truncated: false,
      errors: [],
      staleSearchIndexes: [],
    })
    expect(Object.keys(reply.body).sort()).toEqual([
      'errors',
      'failed',
      'imported',
      'records',
      'staleSearchIndexes',
      'total',
      'truncated',
    ])
    const records = reply.body.records as Record<string, any>[]
    expect(records.map((r) => r.title)).toEqual(['one', 'two', 'three'])
    expect(records[0]).toEqual({
      id: expect.stringMatching(recordId),
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      created_by: owner.id,
      updated_by: owner.id,
      deleted_at: null,
      _version: 1,
      title: 'one',
      count: 1,
      code: null,
      note: null,
      meta: { a: [1, 2] },
      flag: true,
      status: 'new',
    })
    expect(records[2]!.status).toBe('done')
    // What was answered is what was stored.
    for (const record of records) expect(await readRecord(server, owner.token, name, record.id)).toEqual(record)
    expect(await titles(name)).toEqual(['one', 'three', 'two'])
  })

  it('refuses each bad line with its line number and code, and stores the others', async () => {
    const name = await createCollection(server, owner.token, freshName('mixed'), itemFields)
    const body = [
      JSON.stringify({ title: 'good 1' }), // 1
      '{"title": "broken"', // 2
      '', // 3 (blank: skipped, still counted for numbering)
      '[1, 2]', // 4
      JSON.stringify({ count: 3 }), // 5: title missing
      JSON.stringify({ title: 'bad count', count: 'three' }), // 6
      JSON.stringify({ title: 'unknown', colour: 'red' }), // 7
      '   ', // 8
      JSON.stringify({ title: 'long note', note: 'far too long for ten' }), // 9
      JSON.stringify({ title: 'good 2', code: 'G2' }), // 10
      JSON.stringify({ title: null }), // 11
      '42', // 12
    ].join('\r\n')
    const reply = await sendNdjson(name, body, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 2, failed: 8, total: 10, truncated: false })
    expect(reply.body.errors).toEqual([
      { line: 2, code: 'invalid_request', message: expect.stringContaining('JSON') },
      { line: 4, code: 'invalid_request', message: expect.stringContaining('object') },
      { line: 5, code: 'missing_field', message: expect.any(String), field: 'title' },
      { line: 6, code: 'invalid_field', message: expect.any(String), field: 'count' },
      { line: 7, code: 'invalid_field', message: expect.any(String), field: 'colour' },
      { line: 9, code: 'validation_error', message: expect.any(String), field: 'note' },
      { line: 11, code: 'missing_field', message: expect.any(String), field: 'title' },
      { line: 12, code: 'invalid_request', message: expect.stringContaining('object') },
    ])
    expect(reply.body.records.map((r: any) => r.title)).toEqual(['good 1', 'good 2'])
    expect(await titles(name)).toEqual(['good 1', 'good 2'])
  })

  it('refuses a unique value already stored or already earlier in the batch (409-style already_exists per line)', async () => {
    const name = await createCollection(server, owner.token, freshName('uniq'), itemFields)
    const existing = await createRecord(server, owner.token, name, { title: 'existing', code: 'TAKEN' })
    // A soft-deleted record keeps its unique value too.
    const gone = await createRecord(server, owner.token, name, { title: 'gone', code: 'GONE' })
    expect((await server.request('DELETE', recordsPath(name, gone.id), { token: owner.token })).status).toBe(200)
    const reply = await sendNdjson(
      name,
      ndjson(
        { title: 'a', code: 'TAKEN' },
        { title: 'b', code: 'NEW' },
        { title: 'c', code: 'NEW' },
        { title: 'd', code: 'GONE' },
        { title: 'e', id: existing.id },
        { title: 'f', id: 'chosen_id_1' },
        { title: 'g', id: 'chosen_id_1' },
        { title: 'h' },
        { title: 'i' },
      ),
      owner.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 4, failed: 5, total: 9 })
    expect(reply.body.errors).toEqual([
      { line: 1, code: 'already_exists', message: expect.stringContaining('code'), field: 'code' },
      { line: 3, code: 'already_exists', message: expect.stringContaining('code'), field: 'code' },
      { line: 4, code: 'already_exists', message: expect.stringContaining('code'), field: 'code' },
      { line: 5, code: 'already_exists', message: expect.stringContaining('id'), field: 'id' },
      { line: 7, code: 'already_exists', message: expect.stringContaining('id'), field: 'id' },
    ])
    expect(reply.body.records.map((r: any) => r.title)).toEqual(['b', 'f', 'h', 'i'])
    expect(reply.body.records[1].id).toBe('chosen_id_1')
    expect(await titles(name)).toEqual(['b', 'existing', 'f', 'gone', 'h', 'i'])
    expect(await readRecord(server, owner.token, name, existing.id)).toEqual(existing)
  })

  it('a unique value only the database can see (a JSON field) refuses that line alone', async () => {
    const name = await createCollection(server, owner.token, freshName('uniqjson'), [
      { name: 'title', type: 'text', required: true },
      { name: 'shape', type: 'json', required: false, unique: true },
    ])
    await createRecord(server, owner.token, name, { title: 'stored', shape: { k: 1 } })
    const reply = await sendNdjson(
      name,
      ndjson(
        { title: 'x', shape: { k: 2 } },
        { title: 'y', shape: { k: 1 } },
        { title: 'z', shape: { k: 2 } },
        { title: 'w', shape: { k: 3 } },
      ),
      owner.token,
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 2, failed: 2, total: 4 })
    expect(reply.body.errors).toEqual([
      { line: 2, code: 'already_exists', message: expect.any(String), field: 'shape' },
      { line: 3, code: 'already_exists', message: expect.any(String), field: 'shape' },
    ])
    expect(reply.body.records.map((r: any) => r.title)).toEqual(['x', 'w'])
    expect(await titles(name)).toEqual(['stored', 'w', 'x'])
  })

  it('dryRun validates every line (uniqueness included) and writes nothing', async () => {
    const name = await createCollection(server, owner.token, freshName('dry'), itemFields)
    await createRecord(server, owner.token, name, { title: 'existing', code: 'TAKEN' })
    const body = ndjson(
      { title: 'a', code: 'TAKEN' },
      { title: 'b', code: 'X' },
      { title: 'c', code: 'X' },
      { count: 1 },
      { title: 'd' },
    )
    const reply = await sendNdjson(name, body, owner.token, { dryRun: 'true' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      imported: 2,
      failed: 3,
      total: 5,
      truncated: false,
      records: [],
      errors: [
        { line: 1, code: 'already_exists', message: expect.any(String), field: 'code' },
        { line: 3, code: 'already_exists', message: expect.any(String), field: 'code' },
        { line: 4, code: 'missing_field', message: expect.any(String), field: 'title' },
      ],
      staleSearchIndexes: [],
    })
    expect(await titles(name)).toEqual(['existing'])
    // The same body for real stores what the dry run said it would.
    const real = await sendNdjson(name, body, owner.token, { dryRun: 'false' })
    expect(real.body).toMatchObject({ imported: 2, failed: 3 })
    expect(await titles(name)).toEqual(['b', 'd', 'existing'])
  })

  it('reads at most 1000 records: the rest is left out and truncated is true', async () => {
    const name = await createCollection(server, owner.token, freshName('many'), [
      { name: 'n', type: 'integer', required: true },
    ])
    const lines = Array.from({ length: 1003 }, (_, i) => JSON.stringify({ n: i + 1 }))
    const reply = await sendNdjson(name, ['', ...lines].join('\n'), owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ imported: 1000, failed: 0, total: 1000, truncated: true })
    expect(reply.body.records).toHaveLength(1000)
    const stored = (await allRecords(name)).map((r) => r.n).sort((a, b) => a - b)
    expect(stored).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    // Exactly 1000 is not truncated.
    const exact = await sendNdjson(name, lines.slice(0, 1000).join('\n') + '\n\n', owner.token, { dryRun: 'true' })
    expect(exact.body).toMatchObject({ imported: 1000, total: 1000, truncated: false })
  })

  it('the records are in the full-text search index', async () => {
    const name = await createCollection(server, owner.token, freshName('search'), [
      { name: 'title', type: 'text', required: true },
    ])
    const reply = await sendNdjson(
      name,
      ndjson({ title: 'zebra crossing' }, { title: 'lion king' }, { title: 'zebra finch' }),
      owner.token,
    )
    expect(reply.body.imported).toBe(3)
    const found = await server.request('GET', recordsPath(name, undefined, { search: 'zebra', limit: 10 }), {
      token: owner.token,
    })
    expect(found.status, found.text).toBe(200)
    expect(found.body.data.map((r: any) => r.title).sort()).toEqual(['zebra crossing', 'zebra finch'])
  })

  it('a translatable field takes ?locale= as a create does', async () => {
    const name = await createCollection(server, owner.token, freshName('i18n'), [
      { name: 'title', type: 'text', required: false, translatable: true },
    ])
    const reply = await sendNdjson(
      name,
      ndjson({ title: 'Bonjour' }, { title: { en: 'Hi', de: 'Hallo' } }),
      owner.token,
      { locale: 'fr' },
    )
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.records.map((r: any) => r.title)).toEqual(['Bonjour', null])
    const [first, second] = reply.body.records
    expect((await readRecord(server, owner.token, name, first.id, { locale: '*' })).title).toEqual({ fr: 'Bonjour' })
    expect((await readRecord(server, owner.token, name, second.id, { locale: '*' })).title).toEqual({
      en: 'Hi',
      de: 'Hallo',
    })
  })

  it('an administrator may set id, created_at and updated_at; an editor’s are dropped', async () => {
    const name = await createCollection(server, owner.token, freshName('system'), itemFields)
    const mine = await sendNdjson(
      name,
      ndjson({ id: 'legacy_1', created_at: 1_000_000, updated_at: 1_000_500, title: 'migrated' }),
      owner.token,
    )
    expect(mine.body.records[0]).toMatchObject({ id: 'legacy_1', created_at: 1_000_000, updated_at: 1_000_500 })
    const theirs = await sendNdjson(
      name,
      ndjson({ id: 'legacy_2', created_at: 1000, title: 'by editor' }),
      editor.token,
    )
    expect(theirs.status, theirs.text).toBe(200)
    const record = theirs.body.records[0]
    expect(record.id).toMatch(recordId)
    expect(record.created_at).toBeGreaterThan(1000)
    expect(record.created_by).toBe(editor.id)
    expect(await readRecord(server, owner.token, name, record.id)).toMatchObject({
      title: 'by editor',
      created_by: editor.id,
    })
    const bad = await sendNdjson(
      name,
      ndjson({ id: 'no spaces allowed', title: 'x' }, { created_at: -1, title: 'y' }),
      owner.token,
    )
    expect(bad.body.errors).toEqual([
      { line: 1, code: 'invalid_field', message: expect.any(String), field: 'id' },
      { line: 2, code: 'invalid_field', message: expect.any(String), field: 'created_at' },
    ])
  })

  it('emits one record.create per stored record, after the commit', async () => {
    const name = await createCollection(server, owner.token, freshName('events'), itemFields)
    const seen: RecordEvent[] = []
    const stop = server.app.events.on('record.create', (event) => {
      if (event.collection === name) seen.push(event)
    })
    try {
      const reply = await sendNdjson(name, ndjson({ title: 'e1' }, { nope: 1 }, { title: 'e2', count: 2 }), owner.token)
      expect(reply.body.imported).toBe(2)
      await expect.poll(() => seen.length).toBe(2)
      expect(seen.map((e) => e.after!.title).sort()).toEqual(['e1', 'e2'])
      for (const event of seen) {
        expect(event).toMatchObject({
          before: null,
          principal: { id: owner.id, kind: 'user', role: owner.role },
          projectId: expect.any(String),
        })
        expect(reply.body.records.map((r: any) => r.id)).toContain(event.after!.id)
      }
      await sendNdjson(name, ndjson({ title: 'dry' }), owner.token, { dryRun: 'true' })
      const none = await sendNdjson(name, ndjson({ nope: 1 }), owner.token)
      expect(none.body).toMatchObject({ imported: 0, failed: 1 })
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(seen).toHaveLength(2)
    } finally {
      stop()
    }
  })

  it('blocking write hooks see each line and may refuse it alone', async () => {
    const name = await createCollection(server, owner.token, freshName('hooks'), itemFields)
    const remove = server.app.records.hooks.add((write) => {
      if (write.collection.name !== name) return
      if (write.data.title === 'veto') throw new AppError('validation_error', 'No vetoes', { field: 'title' })
      return { ...write.data, note: 'hooked' }
    })
    try {
      const reply = await sendNdjson(name, ndjson({ title: 'fine' }, { title: 'veto' }), owner.token)
      expect(reply.body).toMatchObject({ imported: 1, failed: 1 })
      expect(reply.body.errors).toEqual([{ line: 2, code: 'validation_error', message: 'No vetoes', field: 'title' }])
      expect(reply.body.records[0]).toMatchObject({ title: 'fine', note: 'hooked' })
    } finally {
      remove()
    }
  })

  it('a body over MAX_BODY_BYTES is 413 and stores nothing', async () => {
    const name = await createCollection(server, owner.token, freshName('big'), [
      { name: 'title', type: 'text', required: true },
    ])
    const line = JSON.stringify({ title: 'x'.repeat(500) })
    const reply = await sendNdjson(
      name,
      Array.from({ length: Math.ceil(maxBody / line.length) + 5 }, () => line).join('\n'),
      owner.token,
    )
    expectError(reply, 413, 'payload_too_large')
    expect(await allRecords(name)).toEqual([])
  })

  it('an empty body is 400 invalid_request', async () => {
    expectError(await sendNdjson(items, '\n  \n', owner.token), 400, 'invalid_request')
  })

  describe('what the caller may do', () => {
    it('a create allowlist refuses lines writing other fields', async () => {
      const clerk = await personWith([
        { resource: `collections/${items}`, action: 'create', fields: ['title', 'count'] },
        { resource: `collections/${items}`, action: 'read', fields: ['title'] },
      ])
      const reply = await sendNdjson(
        items,
        ndjson({ title: 'clerk ok', count: 1 }, { title: 'clerk smuggles', note: 'x' }),
        clerk.token,
      )
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.errors).toEqual([
        { line: 2, code: 'forbidden', message: expect.stringContaining('note'), field: 'note' },
      ])
      // The answer shows what the caller may read: system columns and title.
      expect(Object.keys(reply.body.records[0]).sort()).toEqual([
        '_version',
        'created_at',
        'created_by',
        'deleted_at',
        'id',
        'title',
        'updated_at',
        'updated_by',
      ])
      expect(await readRecord(server, owner.token, items, reply.body.records[0].id)).toMatchObject({
        title: 'clerk ok',
        count: 1,
      })
      expect(await titles(items)).not.toContain('clerk smuggles')
    })

    it('a create item_filter refuses lines outside it', async () => {
      const scoped = await personWith([
        { resource: `collections/${items}`, action: 'create', item_filter: { status: { _eq: 'open' } } },
      ])
      const reply = await sendNdjson(
        items,
        ndjson(
          { title: 'scoped in', status: 'open' },
          { title: 'scoped out', status: 'closed' },
          { title: 'scoped default' },
        ),
        scoped.token,
      )
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ imported: 1, failed: 2 })
      expect(reply.body.errors.map((e: any) => [e.line, e.code])).toEqual([
        [2, 'forbidden'],
        [3, 'forbidden'],
      ])
      // Without read, the answer holds system columns only.
      expect(Object.keys(reply.body.records[0]).sort()).toEqual([
        '_version',
        'created_at',
        'created_by',
        'deleted_at',
        'id',
        'updated_at',
        'updated_by',
      ])
      const stored = await titles(items)
      expect(stored).toContain('scoped in')
      expect(stored).not.toContain('scoped out')
      expect(stored).not.toContain('scoped default')
    })

    runScenarios(
      () => server,
      [
        {
          name: 'anonymous callers are 401',
          method: 'POST',
          path: importPath(items),
          rawBody: ndjson({ title: 'anon' }),
          headers: { 'content-type': 'application/x-ndjson' },
          status: 401,
          contains: { error: 'unauthorized' },
        },
        {
          name: 'read alone is 403 naming create',
          method: 'POST',
          path: importPath(items),
          rawBody: ndjson({ title: 'reader' }),
          headers: { 'content-type': 'application/x-ndjson' },
          as: async () => (await personWith([{ resource: `collections/${items}`, action: 'read' }])).token,
          status: 403,
          contains: { error: 'forbidden', details: { resource: `collections/${items}`, action: 'create' } },
        },
        {
          name: 'an unknown collection is 404',
          method: 'POST',
          path: importPath('no_such_collection'),
          rawBody: ndjson({ title: 'x' }),
          headers: { 'content-type': 'application/x-ndjson' },
          as: () => owner.token,
          status: 404,
          contains: { error: 'collection_not_found' },
        },
        {
          name: 'application/json is 415',
          method: 'POST',
          path: importPath(items),
          rawBody: ndjson({ title: 'json typed' }),
          headers: { 'content-type': 'application/json' },
          as: () => owner.token,
          status: 415,
          contains: { error: 'unsupported_media_type' },
        },
        {
          name: 'text/plain is 415',
          method: 'POST',
          path: importPath(items),
          rawBody: ndjson({ title: 'text typed' }),
          headers: { 'content-type': 'text/plain' },
          as: () => owner.token,
          status: 415,
          contains: { error: 'unsupported_media_type' },
        },
        {
          name: 'a bad dryRun is 400',
          method: 'POST',
          path: `${importPath(items)}?dryRun=maybe`,
          rawBody: ndjson({ title: 'x' }),
          headers: { 'content-type': 'application/x-ndjson' },
          as: () => owner.token,
          status: 400,
          contains: { error: 'invalid_request' },
        },
      ],
    )

    it('none of the refused requests stored anything', async () => {
      const stored = await titles(items)
      for (const title of ['anon', 'reader', 'json typed', 'text typed']) expect(stored).not.toContain(title)
    })
  })
})

describe('import jobs', () => {
  const jobs = (collection: string, rest = '') => `/api/v1/collections/${collection}/records/import-jobs${rest}`
  const startJob = async (collection: string, token: string, body?: unknown) => {
    const reply = await server.request('POST', jobs(collection), { token, ...(body === undefined ? {} : { body }) })
    expect(reply.status, reply.text).toBe(201)
    return reply.body
  }
  const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/

  it('a job starts pending, counts its chunks, and finalizes with the final tallies', async () => {
    const name = await createCollection(server, owner.token, freshName('job'), itemFields)
    const job = await startJob(name, owner.token, { total: 5 })
    expect(job).toEqual({
      jobId: expect.stringMatching(recordId),
      collection: name,
      status: 'pending',
      total: 5,
      imported: 0,
      failed: 0,
      chunks: 0,
      errors: [],
      createdAt: expect.stringMatching(iso),
      updatedAt: expect.stringMatching(iso),
    })
    const first = await sendNdjson(name, ndjson({ title: 'j1' }, { nope: true }, { title: 'j2' }), owner.token, {
      jobId: job.jobId,
    })
    expect(first.body).toMatchObject({ imported: 2, failed: 1 })
    // A dry run checks the job but does not count.
    const dry = await sendNdjson(name, ndjson({ title: 'dry' }), owner.token, { jobId: job.jobId, dryRun: 'true' })
    expect(dry.status, dry.text).toBe(200)
    const second = await sendNdjson(name, ndjson('not json', { title: 'j3' }), owner.token, { jobId: job.jobId })
    expect(second.body).toMatchObject({ imported: 1, failed: 1 })

    const progress = await server.request('GET', jobs(name, `/${job.jobId}`), { token: owner.token })
    expect(progress.status, progress.text).toBe(200)
    expect(progress.body).toMatchObject({
      jobId: job.jobId,
      status: 'pending',
      total: 5,
      imported: 3,
      failed: 2,
      chunks: 2,
      errors: [
        { chunk: 1, line: 2, code: 'invalid_field', message: expect.any(String), field: 'nope' },
        { chunk: 2, line: 1, code: 'invalid_request', message: expect.any(String) },
      ],
      createdAt: job.createdAt,
    })

    const done = await server.request('POST', jobs(name, `/${job.jobId}/finalize`), { token: owner.token })
    expect(done.status, done.text).toBe(200)
    expect(done.body).toMatchObject({ jobId: job.jobId, status: 'complete', imported: 3, failed: 2, chunks: 2 })
    expect(done.body).not.toHaveProperty('rebuildingSearchIndexes')
    // Finalizing again answers the same; rebuild=true names the indexes rebuilt (none exist).
    const again = await server.request('POST', jobs(name, `/${job.jobId}/finalize?rebuild=true`), {
      token: owner.token,
    })
    expect(again.status, again.text).toBe(200)
    expect(again.body).toMatchObject({
      status: 'complete',
      imported: 3,
      failed: 2,
      chunks: 2,
      rebuildingSearchIndexes: [],
    })
    expect((await server.request('GET', jobs(name, `/${job.jobId}`), { token: owner.token })).body.status).toBe(
      'complete',
    )

    // A complete job takes no more chunks, and the refused chunk stores nothing.
    const late = await sendNdjson(name, ndjson({ title: 'late' }), owner.token, { jobId: job.jobId })
    expectError(late, 409, 'conflict')
    expect(await titles(name)).toEqual(['j1', 'j2', 'j3'])
  })

  it('total defaults to 0; a body without JSON is fine; a bad total is 400', async () => {
    const name = await createCollection(server, owner.token, freshName('jobtotal'), itemFields)
    expect((await startJob(name, owner.token)).total).toBe(0)
    for (const total of [-1, 1.5, 'ten']) {
      expectError(
        await server.request('POST', jobs(name), { token: owner.token, body: { total } }),
        400,
        'invalid_request',
      )
    }
  })

  it('keeps the first 100 errors of a job', async () => {
    const name = await createCollection(server, owner.token, freshName('joberrors'), itemFields)
    const job = await startJob(name, owner.token)
    // Two different chunks (the same body twice would be one chunk sent again).
    const bad = (chunk: number) => Array.from({ length: 70 }, () => JSON.stringify({ count: chunk })).join('\n')
    for (let i = 0; i < 2; i++)
      expect((await sendNdjson(name, bad(i), owner.token, { jobId: job.jobId })).body.failed).toBe(70)
    const reply = await server.request('GET', jobs(name, `/${job.jobId}`), { token: owner.token })
    expect(reply.body).toMatchObject({ failed: 140, chunks: 2 })
    expect(reply.body.errors).toHaveLength(100)
    expect(reply.body.errors[69]).toMatchObject({ chunk: 1, line: 70 })
    expect(reply.body.errors[70]).toMatchObject({ chunk: 2, line: 1 })
  })

  it('a job is its owner’s alone, of its collection, and gone once expired', async () => {
    const name = await createCollection(server, owner.token, freshName('jobowner'), itemFields)
    const other = await createCollection(server, owner.token, freshName('jobother'), itemFields)
    const job = await startJob(name, owner.token)
    const editorJob = await startJob(name, editor.token)
    for (const [token, collection, id] of [
      [editor.token, name, job.jobId],
      [owner.token, name, editorJob.jobId],
      [owner.token, other, job.jobId],
      [owner.token, name, 'no_such_job'],
    ] as const) {
      expectError(await server.request('GET', jobs(collection, `/${id}`), { token }), 404, 'not_found')
      expectError(await server.request('POST', jobs(collection, `/${id}/finalize`), { token }), 404, 'not_found')
      expectError(await sendNdjson(collection, ndjson({ title: 'stray' }), token, { jobId: id }), 404, 'not_found')
    }
    expect(await titles(name)).toEqual([])
    expect(await titles(other)).toEqual([])
    expect((await server.request('GET', jobs(name, `/${editorJob.jobId}`), { token: editor.token })).status).toBe(200)

    // Expiry (24 h after the last change) is simulated in the store: the job is then missing.
    await server.app.registry.system.db
      .updateTable('record_import_jobs')
      .set({ expires_at: Date.now() - 1 })
      .where('id', '=', job.jobId)
      .execute()
    expectError(await server.request('GET', jobs(name, `/${job.jobId}`), { token: owner.token }), 404, 'not_found')
    expectError(
      await sendNdjson(name, ndjson({ title: 'expired' }), owner.token, { jobId: job.jobId }),
      404,
      'not_found',
    )
    expect(await titles(name)).toEqual([])
  })

  runScenarios(
    () => server,
    [
      {
        name: 'anonymous callers are 401',
        method: 'POST',
        path: `/api/v1/collections/${items}/records/import-jobs`,
        body: {},
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'read alone is 403',
        method: 'POST',
        path: `/api/v1/collections/${items}/records/import-jobs`,
        body: {},
        as: async () => (await personWith([{ resource: `collections/${items}`, action: 'read' }])).token,
        status: 403,
        contains: { error: 'forbidden' },
      },
      {
        name: 'an unknown collection is 404',
        method: 'POST',
        path: '/api/v1/collections/no_such/records/import-jobs',
        body: {},
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'a bad rebuild flag is 400',
        method: 'POST',
        path: `/api/v1/collections/${items}/records/import-jobs/x/finalize?rebuild=yes`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )
})
