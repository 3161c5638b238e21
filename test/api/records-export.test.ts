import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { createCollection, createRecord, freshName, recordsPath } from './records-fixtures.js'

// Export (core-api § Record endpoints, Export): a download of what a list shows the caller, as CSV
// (RFC 4180) or a JSON array. CSV is parsed back here by a small RFC 4180 reader, independent of the server.

let server: TestServer
let owner: Account
const SYSTEM = ['id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'deleted_at', '_version']
const notes = 'notes'
const noteFields = [
  { name: 'title', type: 'text', required: true },
  { name: 'count', type: 'integer', required: false },
  { name: 'price', type: 'decimal', required: false },
  { name: 'done', type: 'boolean', required: false },
  { name: 'meta', type: 'json', required: false },
  { name: 'status', type: 'text', required: false },
  { name: 'secret', type: 'text', required: false },
]

/** RFC 4180: CRLF records, quoted fields with doubled quotes. Asserts the text is well formed. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let i = 0
  let quoted = false
  while (i < text.length) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"'
        i += 2
      } else if (ch === '"') {
        quoted = false
        i++
        expect([',', '\r', undefined]).toContain(text[i])
      } else {
        cell += ch
        i++
      }
    } else if (ch === '"') {
      expect(cell).toBe('')
      quoted = true
      i++
    } else if (ch === ',') {
      row.push(cell)
      cell = ''
      i++
    } else if (ch === '\r') {
      expect(text[i + 1]).toBe('\n')
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
      i += 2
    } else {
      expect(ch).not.toBe('\n')
      cell += ch
      i++
    }
  }
  expect(quoted).toBe(false)
  expect(row).toEqual([])
  expect(cell).toBe('')
  return rows
}

function exportPath(collection: string, query: Record<string, string> = {}): string {
  const qs = new URLSearchParams(query).toString()
  return `/api/v1/collections/${collection}/records/export${qs ? `?${qs}` : ''}`
}

const download = (collection: string, token: string | undefined, query: Record<string, string> = {}): Promise<Reply> =>
  server.request('GET', exportPath(collection, query), { token })

/** A CSV download as objects keyed by its header, and the header itself. */
async function csvOf(
  collection: string,
  token: string,
  query: Record<string, string> = {},
): Promise<{ header: string[]; rows: Record<string, string>[] }> {
  const reply = await download(collection, token, query)
  expect(reply.status, reply.text).toBe(200)
  const [header, ...data] = parseCsv(reply.text)
  for (const line of data) expect(line).toHaveLength(header!.length)
  return { header: header!, rows: data.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i]!]))) }
}

/** Every record as the list answers them to this caller, ordered by id. */
async function listed(
  collection: string,
  token: string,
  query: Record<string, string> = {},
): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = []
  let cursor = ''
  for (;;) {
    const reply = await server.request('GET', recordsPath(collection, undefined, { limit: 100, cursor, ...query }), {
      token,
    })
    expect(reply.status, reply.text).toBe(200)
    out.push(...reply.body.data)
    if (!reply.body.cursors.next) break
    cursor = reply.body.cursors.next
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

let roleSeq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `exporter_${roleSeq++}`
  const role = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name } })
  expect(role.status, role.text).toBe(201)
  const put = await server.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

const seeded: Record<string, any>[] = []
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, notes, noteFields)
  const bodies = [
    {
      id: 'n01',
      title: 'Plain',
      count: 3,
      price: 9.5,
      done: true,
      meta: { a: 1, b: [1, 'x'] },
      status: 'open',
      secret: 's1',
    },
    { id: 'n02', title: 'Comma, and "quotes"', count: -5, done: false, meta: null, status: 'open', secret: 's2' },
    { id: 'n03', title: 'Two\nlines\r\nhere', status: 'closed', secret: 's3' },
    { id: 'n04', title: '=SUM(A1:A9)', status: 'closed' },
    { id: 'n05', title: '+1 555', status: 'open' },
    { id: 'n06', title: '-minus', status: 'open' },
    { id: 'n07', title: '@handle', status: 'open' },
    { id: 'n08', title: 'ünïcødé ✓ 日本', status: 'open' },
    { id: 'n09', title: 'deleted', status: 'open' },
  ]
  for (const body of bodies) seeded.push(await createRecord(server, owner.token, notes, body))
  expect((await server.request('DELETE', recordsPath(notes, 'n09'), { token: owner.token })).status).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

describe('GET /records/export (CSV, the default)', () => {
  it('is a CSV attachment named after the collection', async () => {
    const reply = await download(notes, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(reply.headers.get('content-disposition')).toBe(`attachment; filename="${notes}-export.csv"`)
    expect(reply.headers.get('x-api-version')).toBe('v1')
    expect(reply.text.endsWith('\r\n')).toBe(true)
  })

  it('has a header of the columns and one row per active record, by id', async () => {
    const { header, rows } = await csvOf(notes, owner.token)
    expect(header).toEqual([...SYSTEM, ...noteFields.map((f) => f.name)])
    expect(rows.map((r) => r.id)).toEqual(['n01', 'n02', 'n03', 'n04', 'n05', 'n06', 'n07', 'n08'])
  })

  it('writes values as text: quoted where needed, JSON for objects, empty for null', async () => {
    const { rows } = await csvOf(notes, owner.token)
    const byId = new Map(rows.map((r) => [r.id, r]))
    const first = seeded[0]!
    expect(byId.get('n01')).toEqual({
      id: 'n01',
      created_at: String(first.created_at),
      updated_at: String(first.updated_at),
      created_by: owner.id,
      updated_by: owner.id,
      deleted_at: '',
      _version: '1',
      title: 'Plain',
      count: '3',
      price: '9.5',
      done: 'true',
      meta: JSON.stringify({ a: 1, b: [1, 'x'] }),
      status: 'open',
      secret: 's1',
    })
    expect(byId.get('n02')).toMatchObject({
      title: 'Comma, and "quotes"',
      count: '-5',
      price: '',
      done: 'false',
      meta: '',
    })
    expect(byId.get('n03')!.title).toBe('Two\nlines\r\nhere')
    expect(byId.get('n08')!.title).toBe('ünïcødé ✓ 日本')
  })

  it("prefixes text a spreadsheet would run as a formula with ', and leaves numbers alone", async () => {
    const { rows } = await csvOf(notes, owner.token)
    const byId = new Map(rows.map((r) => [r.id, r]))
    expect(byId.get('n04')!.title).toBe("'=SUM(A1:A9)")
    expect(byId.get('n05')!.title).toBe("'+1 555")
    expect(byId.get('n06')!.title).toBe("'-minus")
    expect(byId.get('n07')!.title).toBe("'@handle")
    expect(byId.get('n02')!.count).toBe('-5')
    expect(byId.get('n01')!.title).toBe('Plain')
  })

  it('ids= exports only those records (missing and soft-deleted ones are absent)', async () => {
    const { rows } = await csvOf(notes, owner.token, { ids: 'n03,n01, n09,nope,n01' })
    expect(rows.map((r) => r.id)).toEqual(['n01', 'n03'])
  })

  it('an empty collection exports the header alone', async () => {
    const name = await createCollection(server, owner.token, freshName('empty'), [
      { name: 'title', type: 'text', required: false },
    ])
    const reply = await download(name, owner.token)
    expect(reply.status).toBe(200)
    expect(reply.text).toBe(`${[...SYSTEM, 'title'].join(',')}\r\n`)
    const json = await download(name, owner.token, { format: 'json' })
    expect(json.body).toEqual([])
  })
})

describe('GET /records/export?format=json', () => {
  it('is a JSON array attachment of exactly what the list answers', async () => {
    const reply = await download(notes, owner.token, { format: 'json' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(reply.headers.get('content-disposition')).toBe(`attachment; filename="${notes}-export.json"`)
    expect(reply.body).toEqual(await listed(notes, owner.token))
    expect(reply.body.map((r: any) => r.id)).not.toContain('n09')
  })
})

describe('many records', () => {
  it('exports every record exactly once across read batches', async () => {
    const name = await createCollection(server, owner.token, freshName('many'), [
      { name: 'n', type: 'integer', required: true },
    ])
    const total = 1234
    for (let start = 0; start < total; start += 1000) {
      const lines = Array.from({ length: Math.min(1000, total - start) }, (_, i) => JSON.stringify({ n: start + i }))
      const reply = await server.request('POST', `/api/v1/collections/${name}/records/import-ndjson`, {
        token: owner.token,
        rawBody: lines.join('\n'),
        headers: { 'content-type': 'application/x-ndjson' },
      })
      expect(reply.body.imported, reply.text).toBe(lines.length)
    }
    const { rows } = await csvOf(name, owner.token)
    expect(rows).toHaveLength(total)
    expect(new Set(rows.map((r) => r.id)).size).toBe(total)
    expect(rows.map((r) => Number(r.n)).sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i))
    const ids = rows.map((r) => r.id)
    expect([...ids].sort()).toEqual(ids)
    const json = await download(name, owner.token, { format: 'json' })
    expect(json.body.map((r: any) => r.id)).toEqual(ids)
  })
})

describe('what the caller may read', () => {
  it('a read item_filter leaves other rows out; an allowlist leaves other columns out', async () => {
    const clerk = await personWith([
      {
        resource: `collections/${notes}`,
        action: 'read',
        fields: ['title', 'status'],
        item_filter: { status: { _eq: 'closed' } },
      },
    ])
    const { header, rows } = await csvOf(notes, clerk.token)
    expect(header).toEqual([...SYSTEM, 'title', 'status'])
    expect(rows.map((r) => r.id)).toEqual(['n03', 'n04'])
    const json = await download(notes, clerk.token, { format: 'json' })
    expect(json.body).toEqual(await listed(notes, clerk.token))
    expect(json.text).not.toContain('s3')
    // ids= cannot reach a hidden record.
    expect((await csvOf(notes, clerk.token, { ids: 'n01,n03' })).rows.map((r) => r.id)).toEqual(['n03'])
  })

  it('a private collection exports only the caller’s own records', async () => {
    const name = await createCollection(
      server,
      owner.token,
      freshName('private'),
      [{ name: 'title', type: 'text', required: false }],
      { accessControl: { preset: 'private' } },
    )
    const member = await personWith([
      { resource: `collections/${name}`, action: 'read' },
      { resource: `collections/${name}`, action: 'create' },
    ])
    await createRecord(server, owner.token, name, { title: 'owner’s' })
    const mine = await createRecord(server, member.token, name, { title: 'member’s' })
    const { header, rows } = await csvOf(name, member.token)
    expect(header).toEqual([...SYSTEM, 'owned_by', 'title'])
    expect(rows.map((r) => r.id)).toEqual([mine.id])
  })

  it('translatable fields export their locale map, or one locale with locale=', async () => {
    const name = await createCollection(server, owner.token, freshName('i18n'), [
      { name: 'title', type: 'text', required: false, translatable: true },
    ])
    await createRecord(server, owner.token, name, { id: 'p1', title: { en: 'Hello', fr: 'Bonjour' } })
    expect((await csvOf(name, owner.token)).rows[0]!.title).toBe(JSON.stringify({ en: 'Hello', fr: 'Bonjour' }))
    expect((await csvOf(name, owner.token, { locale: 'fr' })).rows[0]!.title).toBe('Bonjour')
    const json = await download(name, owner.token, { format: 'json' })
    expect(json.body[0].title).toEqual({ en: 'Hello', fr: 'Bonjour' })
  })

  it('computed fields are exported as the list computes them', async () => {
    const people = await createCollection(server, owner.token, freshName('people'), [
      { name: 'name', type: 'text', required: true },
    ])
    const tasks = await createCollection(server, owner.token, freshName('tasks'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'assignee',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: people, relationType: 'belongsTo' },
      },
      {
        name: 'assignee_name',
        type: 'lookup',
        required: false,
        lookupConfig: { relationField: 'assignee', targetField: 'name' },
      },
    ])
    const ada = await createRecord(server, owner.token, people, { name: 'Ada' })
    await createRecord(server, owner.token, tasks, { id: 't1', title: 'Count', assignee: ada.id })
    const { header, rows } = await csvOf(tasks, owner.token)
    expect(header).toEqual([...SYSTEM, 'title', 'assignee', 'assignee_name'])
    expect(rows[0]).toMatchObject({ title: 'Count', assignee: ada.id, assignee_name: 'Ada' })
  })

  runScenarios(
    () => server,
    [
      {
        name: 'anonymous callers are 401',
        method: 'GET',
        path: exportPath(notes),
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'without read it is 403',
        method: 'GET',
        path: exportPath(notes),
        as: async () => (await personWith([{ resource: `collections/${notes}`, action: 'create' }])).token,
        status: 403,
        contains: { error: 'forbidden', details: { action: 'read' } },
        notContains: ['Plain'],
      },
      {
        name: 'an unknown collection is 404',
        method: 'GET',
        path: exportPath('no_such'),
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'an unknown format is 400',
        method: 'GET',
        path: exportPath(notes, { format: 'xml' }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an empty ids is 400',
        method: 'GET',
        path: exportPath(notes, { ids: ' , ' }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a malformed id is 400',
        method: 'GET',
        path: exportPath(notes, { ids: 'n01,bad id' }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'more than 500 ids is 400',
        method: 'GET',
        path: exportPath(notes, { ids: Array.from({ length: 501 }, (_, i) => `i${i}`).join(',') }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a bad locale is 400',
        method: 'GET',
        path: exportPath(notes, { locale: 'not a locale' }),
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('a public collection exports to anonymous callers', async () => {
    const name = await createCollection(
      server,
      owner.token,
      freshName('public'),
      [{ name: 'title', type: 'text', required: false }],
      { accessControl: { preset: 'public' } },
    )
    await createRecord(server, owner.token, name, { id: 'pub1', title: 'for all' })
    const reply = await download(name, undefined)
    expect(reply.status, reply.text).toBe(200)
    expect(parseCsv(reply.text)[1]).toContain('for all')
  })
})
