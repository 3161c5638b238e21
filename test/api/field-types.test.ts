import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { runScenarios, type Scenario } from '../support/scenarios.js'
import { createCollection, createRecord, field, getCollection, postRecord, readRecord } from './collections-support.js'
import { someBytes, uploadViaToken } from './files-support.js'

/**
 * The 21 field types of addendum §4, through the records API: what each accepts and reads back (the same
 * JSON, in the same JSON types, on SQLite and PostgreSQL), what it refuses and with which code, and the
 * definition options: validationRules, required, unique, defaultValue, relations, lookup, rollup,
 * translatable.
 */

let server: TestServer
let owner: Account

const colours = ['red', 'green', 'blue']
const hexId = '0123456789abcdef0123456789abcdef'
/** Stands for the id of a file the owner uploads first: a file field takes only files the writer may read. */
const uploadedFile = '(an uploaded file)'
let fileId = ''
/** A table value, with the stand-in replaced by the uploaded file's id. */
const real = (value: unknown): unknown => (value === uploadedFile ? fileId : value)

/** One optional field of every stored type, plus the two computed ones, in `typed`. */
const typedFields = [
  field('f_text', 'text'),
  field('f_richtext', 'richtext'),
  field('f_email', 'email'),
  field('f_url', 'url'),
  field('f_phone', 'phone'),
  field('f_slug', 'slug'),
  field('f_uuid', 'uuid'),
  field('f_integer', 'integer'),
  field('f_decimal', 'decimal'),
  field('f_number', 'number'),
  field('f_boolean', 'boolean'),
  field('f_date', 'date'),
  field('f_datetime', 'datetime'),
  field('f_enum', 'enum', { enumValues: colours }),
  field('f_multi_enum', 'multi_enum', { enumValues: colours }),
  field('f_json', 'json'),
  field('f_relation', 'relation', { relationConfig: { targetCollection: 'typed_target', relationType: 'belongsTo' } }),
  field('f_file', 'file'),
  field('f_geo', 'geo'),
  field('f_lookup', 'lookup', { lookupConfig: { relationField: 'f_relation', targetField: 'label' } }),
  field('f_rollup', 'rollup', { rollupConfig: { relationField: 'f_many', function: 'count' } }),
  field('f_many', 'relation', { relationConfig: { targetCollection: 'typed_target', relationType: 'hasMany' } }),
]
const allTypes = [
  'text',
  'richtext',
  'email',
  'url',
  'phone',
  'slug',
  'uuid',
  'integer',
  'decimal',
  'number',
  'boolean',
  'date',
  'datetime',
  'enum',
  'multi_enum',
  'json',
  'relation',
  'file',
  'geo',
  'lookup',
  'rollup',
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, { name: 'typed_target', fields: [field('label', 'text')] })
  await createCollection(server, owner.token, { name: 'typed', fields: typedFields })
  fileId = await uploadViaToken(server, owner.token, someBytes(16))
})
afterAll(async () => {
  await server?.stop()
})

const records = (name: string, query = '') =>
  server.request('GET', `/api/v1/collections/${name}/records${query}`, { token: owner.token })
const total = async (name: string) => (await records(name, '?limit=1')).body.total as number
const patchRecord = (name: string, id: string, body: Record<string, unknown>, query = '') =>
  server.request('PATCH', `/api/v1/collections/${name}/records/${id}${query}`, { token: owner.token, body })

const nested = (depth: number): unknown => (depth === 0 ? 'bottom' : { down: nested(depth - 1) })

it('the typed collection covers all 21 types (jsonb collapses to json)', async () => {
  const detail = await getCollection(server, owner.token, 'typed')
  expect(new Set(detail.fields.map((f: { type: string }) => f.type))).toEqual(new Set(allTypes))
  const alias = await createCollection(server, owner.token, { name: 'aliased', fields: [field('doc', 'jsonb')] })
  expect(alias.fields[0].type).toBe('json')
  expect((await createRecord(server, owner.token, 'aliased', { doc: { a: [1] } })).doc).toEqual({ a: [1] })
})

describe('values each type accepts, read back as the same JSON', () => {
  // [field, value sent, value read back]
  const accepted: [string, unknown, unknown][] = [
    ['f_text', 'hello', 'hello'],
    ['f_text', '', ''],
    ['f_text', 'multi\nline ünïcødé 😀 \'quoted\' "double"', 'multi\nline ünïcødé 😀 \'quoted\' "double"'],
    ['f_richtext', '<p>Hello <b>world</b></p>', '<p>Hello <b>world</b></p>'],
    ['f_email', 'ada@example.com', 'ada@example.com'],
    ['f_email', 'first.last+tag@sub.example.org', 'first.last+tag@sub.example.org'],
    ['f_url', 'https://example.com/path?q=1#frag', 'https://example.com/path?q=1#frag'],
    ['f_url', 'http://localhost:8080/', 'http://localhost:8080/'],
    ['f_phone', '+44 20 7946 0958', '+44 20 7946 0958'],
    ['f_phone', '(555) 123-4567', '(555) 123-4567'],
    ['f_slug', 'hello-world-2', 'hello-world-2'],
    ['f_uuid', '3F2504E0-4F89-11D3-9A0C-0305E82C3301', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
    ['f_uuid', '3f2504e04f8911d39a0c0305e82c3301', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
    ['f_integer', 42, 42],
    ['f_integer', -7, -7],
    ['f_integer', 0, 0],
    ['f_integer', 9007199254740991, 9007199254740991],
    ['f_integer', -9007199254740991, -9007199254740991],
    ['f_decimal', 12.34, 12.34],
    ['f_decimal', -3, -3],
    ['f_decimal', 0.000001, 0.000001],
    ['f_number', 3.14159, 3.14159],
    ['f_number', 1e300, 1e300],
    ['f_number', -0.5, -0.5],
    ['f_boolean', true, true],
    ['f_boolean', false, false],
    ['f_date', '2024-02-29', '2024-02-29'],
    ['f_date', '1999-12-31', '1999-12-31'],
    ['f_datetime', 1700000000, 1700000000],
    ['f_datetime', 0, 0],
    ['f_enum', 'green', 'green'],
    ['f_multi_enum', ['blue', 'red'], ['blue', 'red']],
    ['f_multi_enum', [], []],
    ['f_json', { a: 1, b: [true, null, 'x'], c: { d: 1.5 } }, { a: 1, b: [true, null, 'x'], c: { d: 1.5 } }],
    ['f_json', [1, 'two', { three: 3 }], [1, 'two', { three: 3 }]],
    ['f_json', 'just a string', 'just a string'],
    ['f_json', '{"looks":"like json"}', '{"looks":"like json"}'],
    ['f_json', 42, 42],
    ['f_json', false, false],
    ['f_json', {}, {}],
    ['f_file', uploadedFile, uploadedFile],
    ['f_geo', { type: 'Point', coordinates: [13.4, 52.52] }, { type: 'Point', coordinates: [13.4, 52.52] }],
    ['f_geo', { type: 'Point', coordinates: [-180, -90, 12.5] }, { type: 'Point', coordinates: [-180, -90, 12.5] }],
    [
      'f_geo',
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
    ],
    [
      'f_geo',
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    ],
    [
      'f_geo',
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [1, 2] },
          { type: 'MultiPoint', coordinates: [[3, 4]] },
        ],
      },
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [1, 2] },
          { type: 'MultiPoint', coordinates: [[3, 4]] },
        ],
      },
    ],
  ]

  it.each(accepted)('%s accepts %j', async (name, sentValue, expectedValue) => {
    const [sent, expected] = [real(sentValue), real(expectedValue)]
    const created = await createRecord(server, owner.token, 'typed', { [name]: sent })
    expect(created[name]).toStrictEqual(expected)
    expect((await readRecord(server, owner.token, 'typed', created.id))[name]).toStrictEqual(expected)
    const listed = await records('typed', `?filter=${encodeURIComponent(JSON.stringify({ id: { _eq: created.id } }))}`)
    expect(listed.body.data[0][name]).toStrictEqual(expected)
    // Every other field of the record is null, not a leftover or a default.
    for (const other of typedFields.map((f) => f.name as string).filter((n) => n !== name && n !== 'f_rollup'))
      expect(created[other], other).toBeNull()
    expect(created.f_rollup).toBe(0)
  })

  it('an update writes the same values as a create', async () => {
    const created = await createRecord(server, owner.token, 'typed', {})
    for (const [name, sent, expected] of accepted) {
      const reply = await patchRecord('typed', created.id, { [name]: real(sent) })
      expect(reply.status, `${name}: ${reply.text}`).toBe(200)
      expect(reply.body[name], name).toStrictEqual(real(expected))
    }
  })

  it('null clears an optional field of any stored type', async () => {
    const full = Object.fromEntries(accepted.map(([name, sent]) => [name, real(sent)]))
    const created = await createRecord(server, owner.token, 'typed', full)
    const cleared = Object.fromEntries(Object.keys(full).map((name) => [name, null]))
    const reply = await patchRecord('typed', created.id, cleared)
    expect(reply.status, reply.text).toBe(200)
    for (const name of Object.keys(full)) expect(reply.body[name], name).toBeNull()
    const reread = await readRecord(server, owner.token, 'typed', created.id)
    for (const name of Object.keys(full)) expect(reread[name], name).toBeNull()
  })
})

describe('values each type refuses: 400 invalid_field naming the field, nothing stored', () => {
  // [field, what, value]
  const refused: [string, string, unknown][] = [
    ['f_text', 'a number', 42],
    ['f_text', 'a boolean', true],
    ['f_text', 'an object', { a: 1 }],
    ['f_text', 'a list', ['a']],
    ['f_richtext', 'a number', 1],
    ['f_email', 'no @', 'ada.example.com'],
    ['f_email', 'no domain dot', 'ada@example'],
    ['f_email', 'a space', 'ada @example.com'],
    ['f_email', 'no local part', '@example.com'],
    ['f_email', 'a number', 42],
    ['f_url', 'javascript:', 'javascript:alert(1)'],
    ['f_url', 'no scheme', 'example.com/x'],
    ['f_url', 'ftp', 'ftp://example.com/x'],
    ['f_url', 'a space', 'https://exa mple.com'],
    ['f_phone', 'words', 'call me maybe'],
    ['f_phone', 'two digits', '12'],
    ['f_phone', 'a number, not a string', 5551234567],
    ['f_slug', 'upper case', 'Hello-World'],
    ['f_slug', 'an underscore', 'hello_world'],
    ['f_slug', 'a double hyphen', 'a--b'],
    ['f_slug', 'a trailing hyphen', 'a-'],
    ['f_uuid', 'not a uuid', 'not-a-uuid'],
    ['f_uuid', 'one digit short', '3f2504e0-4f89-11d3-9a0c-0305e82c330'],
    ['f_uuid', 'a number', 123],
    ['f_integer', 'a fraction', 1.5],
    ['f_integer', 'a numeric string', '42'],
    ['f_integer', 'beyond 2^53', 9007199254740992],
    ['f_integer', 'a boolean', true],
    ['f_decimal', 'a numeric string', '12.34'],
    ['f_decimal', 'a list', [1]],
    ['f_number', 'a string', 'pi'],
    ['f_number', 'an object', { value: 1 }],
    ['f_boolean', '1', 1],
    ['f_boolean', '0', 0],
    ['f_boolean', '"true"', 'true'],
    ['f_date', 'no such day', '2023-02-29'],
    ['f_date', 'month 13', '2024-13-01'],
    ['f_date', 'no leading zeros', '2024-1-1'],
    ['f_date', 'a timestamp string', '2024-01-01T00:00:00Z'],
    ['f_date', 'a number', 20240101],
    ['f_datetime', 'negative', -1],
    ['f_datetime', 'a fraction', 1.5],
    ['f_datetime', 'an ISO string', '2024-01-01T00:00:00Z'],
    ['f_enum', 'not a choice', 'purple'],
    ['f_enum', 'another case', 'Green'],
    ['f_enum', 'a list', ['red']],
    ['f_multi_enum', 'a single value', 'red'],
    ['f_multi_enum', 'a repeated value', ['red', 'red']],
    ['f_multi_enum', 'not a choice', ['red', 'purple']],
    ['f_multi_enum', 'a number inside', [1]],
    ['f_json', 'nested 70 levels', nested(70)],
    ['f_relation', 'a malformed id', 'bad id!'],
    ['f_relation', 'a number', 42],
    ['f_relation', 'a list', ['abc']],
    ['f_many', 'a single id', 'abc'],
    ['f_many', 'a repeated id', ['abc', 'abc']],
    ['f_many', 'a number inside', [42]],
    ['f_file', 'too short', 'abc'],
    ['f_file', 'upper-case hex', hexId.toUpperCase()],
    ['f_file', 'a number', 42],
    ['f_geo', 'longitude out of range', { type: 'Point', coordinates: [200, 0] }],
    ['f_geo', 'latitude out of range', { type: 'Point', coordinates: [0, 95] }],
    ['f_geo', 'a Feature', { type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] }, properties: {} }],
    [
      'f_geo',
      'an open polygon ring',
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      },
    ],
    ['f_geo', 'a line of one position', { type: 'LineString', coordinates: [[0, 0]] }],
    ['f_geo', 'no coordinates', { type: 'Point' }],
    ['f_geo', 'WKT text', 'POINT(1 2)'],
    ['f_lookup', 'any value (computed)', 'x'],
    ['f_lookup', 'null (computed)', null],
    ['f_rollup', 'any value (computed)', 3],
    ['nonexistent', 'an unknown field', 'x'],
  ]
  let before: number
  beforeAll(async () => {
    before = await total('typed')
  })

  runScenarios(
    () => server,
    refused.map(
      ([name, what, value]): Scenario => ({
        name: `${name} refuses ${what}`,
        method: 'POST',
        path: '/api/v1/collections/typed/records',
        as: () => owner.token,
        body: { [name]: value },
        status: 400,
        contains: { error: 'invalid_field', details: { field: name } },
      }),
    ),
  )

  it('none of the refused creates stored a record', async () => {
    expect(await total('typed')).toBe(before)
  })

  it('an update with a refused value is 400 and leaves the record as it was', async () => {
    const created = await createRecord(server, owner.token, 'typed', { f_text: 'kept', f_integer: 1 })
    for (const [name, what, value] of refused) {
      // Each refused value travels with a valid change to another field, which must not land either.
      const companion = name === 'f_text' ? { f_integer: 2 } : { f_text: 'changed' }
      const reply = await patchRecord('typed', created.id, { ...companion, [name]: value })
      expect(reply.status, `${name} ${what}: ${reply.text}`).toBe(400)
      expect(reply.body.error, `${name} ${what}`).toBe('invalid_field')
    }
    const reread = await readRecord(server, owner.token, 'typed', created.id)
    expect(reread).toMatchObject({ f_text: 'kept', f_integer: 1, _version: 1 })
  })
})

describe('validationRules: 422 validation_error', () => {
  beforeAll(async () => {
    await createCollection(server, owner.token, {
      name: 'ruled',
      fields: [
        field('code', 'text', { validationRules: { minLength: 3, maxLength: 5, pattern: '^[A-Z]+$' } }),
        field('emoji', 'text', { validationRules: { minLength: 3, maxLength: 3 } }),
        field('contact', 'email', { validationRules: { maxLength: 16 } }),
        field('qty', 'integer', { validationRules: { min: 1, max: 10 } }),
        field('price', 'decimal', { validationRules: { min: 0.5, max: 2.5 } }),
        field('ratio', 'number', { validationRules: { min: -1, max: 1 } }),
        field('at', 'datetime', { validationRules: { min: 1000 } }),
      ],
    })
  })

  const failing: [string, unknown, string][] = [
    ['code', 'AB', 'minLength'],
    ['code', 'ABCDEF', 'maxLength'],
    ['code', 'abc', 'pattern'],
    ['code', 'AB1', 'pattern'],
    ['emoji', '😀😀', 'minLength'],
    ['emoji', '😀😀😀😀', 'maxLength'],
    ['contact', 'someone@example.org', 'maxLength'],
    ['qty', 0, 'min'],
    ['qty', 11, 'max'],
    ['price', 0.4, 'min'],
    ['price', 2.51, 'max'],
    ['ratio', -1.01, 'min'],
    ['ratio', 1.5, 'max'],
    ['at', 999, 'min'],
  ]
  runScenarios(
    () => server,
    failing.map(
      ([name, value, rule]): Scenario => ({
        name: `${name} ${JSON.stringify(value)} fails ${rule}`,
        method: 'POST',
        path: '/api/v1/collections/ruled/records',
        as: () => owner.token,
        body: { [name]: value },
        status: 422,
        contains: { error: 'validation_error', details: { field: name } },
      }),
    ),
  )

  it('values on the boundaries pass (lengths count characters, not UTF-16 units)', async () => {
    for (const body of [
      { code: 'ABC' },
      { code: 'ABCDE' },
      { emoji: '😀😀😀' },
      { contact: 'ada@example.org' },
      { qty: 1 },
      { qty: 10 },
      { price: 0.5 },
      { price: 2.5 },
      { ratio: -1 },
      { ratio: 1 },
      { at: 1000 },
    ]) {
      const reply = await postRecord(server, owner.token, 'ruled', body)
      expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).toBe(201)
      expect(reply.body).toMatchObject(body)
    }
  })

  it('a wrong type is invalid_field (400) before any rule is checked', async () => {
    for (const body of [{ code: 42 }, { contact: 'not an email at all' }, { qty: 'x' }, { qty: 1.5 }]) {
      const reply = await postRecord(server, owner.token, 'ruled', body)
      expect(reply.status, JSON.stringify(body)).toBe(400)
      expect(reply.body.error).toBe('invalid_field')
    }
  })

  it('rules apply to updates too, and a refused update changes nothing', async () => {
    const short = await postRecord(server, owner.token, 'ruled', { code: 'OK', qty: 5 })
    expect(short.status).toBe(422) // 'OK' is two characters: minLength 3
    const fine = await createRecord(server, owner.token, 'ruled', { code: 'FINE', qty: 5 })
    const reply = await patchRecord('ruled', fine.id, { qty: 50 })
    expect(reply.status).toBe(422)
    expect(reply.body).toMatchObject({ error: 'validation_error', details: { field: 'qty' } })
    expect(await readRecord(server, owner.token, 'ruled', fine.id)).toMatchObject({ qty: 5, _version: 1 })
  })
})

describe('required, unique, defaultValue', () => {
  beforeAll(async () => {
    await createCollection(server, owner.token, {
      name: 'constrained',
      fields: [
        field('title', 'text', { required: true }),
        field('code', 'text', { unique: true }),
        field('seq', 'integer', { unique: true }),
        field('flag', 'boolean', { required: true }),
      ],
    })
    await createCollection(server, owner.token, {
      name: 'defaulted',
      fields: [
        field('status', 'text', { defaultValue: 'draft' }),
        field('count', 'integer', { defaultValue: 5 }),
        field('zero', 'integer', { defaultValue: 0 }),
        field('active', 'boolean', { defaultValue: false }),
        field('meta', 'json', { defaultValue: { tags: [] } }),
        field('colour', 'enum', { enumValues: colours, defaultValue: 'red' }),
        field('colours', 'multi_enum', { enumValues: colours, defaultValue: ['green'] }),
        field('day', 'date', { defaultValue: '2024-01-01' }),
        field('id_like', 'uuid', { defaultValue: 'AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE' }),
        field('must', 'text', { required: true, defaultValue: 'filled' }),
        field('plain', 'text'),
      ],
    })
  })

  runScenarios(
    () => server,
    [
      {
        name: 'a required field missing',
        method: 'POST',
        path: '/api/v1/collections/constrained/records',
        as: () => owner.token,
        body: { flag: true },
        status: 400,
        contains: { error: 'missing_field', details: { field: 'title' } },
      },
      {
        name: 'a required field null',
        method: 'POST',
        path: '/api/v1/collections/constrained/records',
        as: () => owner.token,
        body: { title: null, flag: true },
        status: 400,
        contains: { error: 'missing_field', details: { field: 'title' } },
      },
      {
        name: 'a required boolean missing',
        method: 'POST',
        path: '/api/v1/collections/constrained/records',
        as: () => owner.token,
        body: { title: 'x' },
        status: 400,
        contains: { error: 'missing_field', details: { field: 'flag' } },
      },
      {
        name: 'an empty body',
        method: 'POST',
        path: '/api/v1/collections/constrained/records',
        as: () => owner.token,
        body: {},
        status: 400,
        contains: { error: 'missing_field' },
      },
    ],
  )

  it('required: false is a value; a present required field passes; null on update is missing_field', async () => {
    const created = await createRecord(server, owner.token, 'constrained', { title: 'here', flag: false })
    expect(created).toMatchObject({ title: 'here', flag: false, code: null })
    const reply = await patchRecord('constrained', created.id, { title: null })
    expect(reply.status).toBe(400)
    expect(reply.body).toMatchObject({ error: 'missing_field', details: { field: 'title' } })
    // An update that leaves the required field out is fine.
    expect((await patchRecord('constrained', created.id, { code: 'later' })).status).toBe(200)
    expect(await readRecord(server, owner.token, 'constrained', created.id)).toMatchObject({
      title: 'here',
      code: 'later',
    })
  })

  it('unique: a duplicate is 409 already_exists on create and on update; nulls and other cases do not clash', async () => {
    const a = await createRecord(server, owner.token, 'constrained', { title: 'a', flag: true, code: 'SAME', seq: 1 })
    const dup = await postRecord(server, owner.token, 'constrained', { title: 'b', flag: true, code: 'SAME' })
    expect(dup.status).toBe(409)
    expect(dup.body).toMatchObject({ error: 'already_exists', details: { fields: ['code'] } })
    expect(dup.text).not.toContain('SAME')
    const dupNumber = await postRecord(server, owner.token, 'constrained', { title: 'b', flag: true, seq: 1 })
    expect(dupNumber.status).toBe(409)
    expect(dupNumber.body.error).toBe('already_exists')

    const b = await createRecord(server, owner.token, 'constrained', { title: 'b', flag: true, code: 'same' })
    await createRecord(server, owner.token, 'constrained', { title: 'c', flag: true })
    await createRecord(server, owner.token, 'constrained', { title: 'd', flag: true })
    const clash = await patchRecord('constrained', b.id, { code: 'SAME' })
    expect(clash.status).toBe(409)
    expect(clash.body.error).toBe('already_exists')
    expect((await readRecord(server, owner.token, 'constrained', b.id)).code).toBe('same')
    const filter = encodeURIComponent(JSON.stringify({ code: { _eq: 'SAME' } }))
    expect((await records('constrained', `?filter=${filter}`)).body.data.map((r: { id: string }) => r.id)).toEqual([
      a.id,
    ])
  })

  it('defaultValue fills fields left out of a create, in their stored form', async () => {
    const created = await createRecord(server, owner.token, 'defaulted', {})
    expect(created).toMatchObject({
      status: 'draft',
      count: 5,
      zero: 0,
      active: false,
      meta: { tags: [] },
      colour: 'red',
      colours: ['green'],
      day: '2024-01-01',
      id_like: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
      must: 'filled',
      plain: null,
    })
    expect(await readRecord(server, owner.token, 'defaulted', created.id)).toMatchObject({
      active: false,
      meta: { tags: [] },
      count: 5,
    })
  })

  it('values sent win over defaults, an explicit null on an optional field stays null, and updates never re-apply defaults', async () => {
    const created = await createRecord(server, owner.token, 'defaulted', {
      status: 'live',
      count: 9,
      active: true,
      colour: 'blue',
      meta: null,
    })
    expect(created).toMatchObject({
      status: 'live',
      count: 9,
      active: true,
      colour: 'blue',
      meta: null,
      must: 'filled',
    })
    const reply = await patchRecord('defaulted', created.id, { status: null, plain: 'x' })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ status: null, count: 9, plain: 'x' })
    const requiredNull = await patchRecord('defaulted', created.id, { must: null })
    expect(requiredNull.status).toBe(400)
    expect(requiredNull.body.error).toBe('missing_field')
  })
})

describe('relations, lookup and rollup', () => {
  const ids: Record<string, string> = {}
  beforeAll(async () => {
    await createCollection(server, owner.token, {
      name: 'authors',
      fields: [field('name', 'text'), field('born', 'integer')],
    })
    await createCollection(server, owner.token, {
      name: 'books',
      fields: [
        field('title', 'text'),
        field('pages', 'integer'),
        field('price', 'decimal'),
        field('released', 'datetime'),
        field('published', 'date'),
        field('author', 'relation', { relationConfig: { targetCollection: 'authors', relationType: 'belongsTo' } }),
        field('author_name', 'lookup', { lookupConfig: { relationField: 'author', targetField: 'name' } }),
        field('author_born', 'lookup', { lookupConfig: { relationField: 'author', targetField: 'born' } }),
      ],
    })
    await createCollection(server, owner.token, {
      name: 'shelves',
      fields: [
        field('label', 'text'),
        field('books', 'relation', { relationConfig: { targetCollection: 'books', relationType: 'hasMany' } }),
        field('book_count', 'rollup', { rollupConfig: { relationField: 'books', function: 'count' } }),
        field('pages_sum', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'sum', targetField: 'pages' },
        }),
        field('pages_avg', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'avg', targetField: 'pages' },
        }),
        field('pages_min', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'min', targetField: 'pages' },
        }),
        field('pages_max', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'max', targetField: 'pages' },
        }),
        field('price_sum', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'sum', targetField: 'price' },
        }),
        field('latest_release', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'max', targetField: 'released' },
        }),
        field('first_published', 'rollup', {
          rollupConfig: { relationField: 'books', function: 'min', targetField: 'published' },
        }),
      ],
    })
    ids.ada = (await createRecord(server, owner.token, 'authors', { name: 'Ada', born: 1815 })).id
    ids.alan = (await createRecord(server, owner.token, 'authors', { name: 'Alan', born: 1912 })).id
    ids.b1 = (
      await createRecord(server, owner.token, 'books', {
        title: 'Notes',
        pages: 100,
        price: 9.5,
        released: 1000,
        published: '2001-05-01',
        author: ids.ada,
      })
    ).id
    ids.b2 = (
      await createRecord(server, owner.token, 'books', {
        title: 'Machines',
        pages: 250,
        price: 10.25,
        released: 3000,
        published: '1999-03-02',
        author: ids.alan,
      })
    ).id
  })

  it('belongsTo is stored and read as the target id; hasMany as the list of ids', async () => {
    const book = await readRecord(server, owner.token, 'books', ids.b1!)
    expect(book.author).toBe(ids.ada)
    const shelf = await createRecord(server, owner.token, 'shelves', { label: 'mixed', books: [ids.b2, ids.b1] })
    expect(shelf.books).toStrictEqual([ids.b2, ids.b1])
    expect((await readRecord(server, owner.token, 'shelves', shelf.id)).books).toStrictEqual([ids.b2, ids.b1])
    const expanded = await readRecord(server, owner.token, 'shelves', shelf.id, '?expand=books')
    expect(expanded.books.map((b: { title: string }) => b.title).sort()).toEqual(['Machines', 'Notes'])
  })

  it('lookup reads the target field through the relation, on every read', async () => {
    const created = await createRecord(server, owner.token, 'books', { title: 'Draft', author: ids.ada })
    expect(created).toMatchObject({ author_name: 'Ada', author_born: 1815 })
    const orphan = await createRecord(server, owner.token, 'books', { title: 'Anonymous' })
    expect(orphan).toMatchObject({ author: null, author_name: null, author_born: null })

    const renamed = await server.request('PATCH', `/api/v1/collections/authors/records/${ids.ada}`, {
      token: owner.token,
      body: { name: 'Ada Lovelace' },
    })
    expect(renamed.status).toBe(200)
    expect((await readRecord(server, owner.token, 'books', created.id)).author_name).toBe('Ada Lovelace')
    const listed = await records('books', `?filter=${encodeURIComponent(JSON.stringify({ id: { _eq: created.id } }))}`)
    expect(listed.body.data[0]).toMatchObject({ author_name: 'Ada Lovelace', author_born: 1815 })

    const moved = await patchRecord('books', created.id, { author: ids.alan })
    expect(moved.body).toMatchObject({ author: ids.alan, author_name: 'Alan', author_born: 1912 })
  })

  it('rollup aggregates over the hasMany records on read: count, sum, avg, min, max', async () => {
    const shelf = await createRecord(server, owner.token, 'shelves', { label: 'two', books: [ids.b1, ids.b2] })
    expect(shelf).toMatchObject({
      book_count: 2,
      pages_sum: 350,
      pages_avg: 175,
      pages_min: 100,
      pages_max: 250,
      price_sum: 19.75,
      latest_release: 3000,
    })
    const empty = await createRecord(server, owner.token, 'shelves', { label: 'empty', books: [] })
    expect(empty).toMatchObject({
      book_count: 0,
      pages_sum: 0,
      pages_avg: null,
      pages_min: null,
      pages_max: null,
      latest_release: null,
      first_published: null,
    })
    const none = await createRecord(server, owner.token, 'shelves', { label: 'unset' })
    expect(none).toMatchObject({ books: null, book_count: 0 })

    // Computed on read: a change to a book shows at once; a soft-deleted book no longer counts.
    const b3 = await createRecord(server, owner.token, 'books', { title: 'Extra', pages: 50 })
    await patchRecord('shelves', shelf.id, { books: [ids.b1, ids.b2, b3.id] })
    expect(await readRecord(server, owner.token, 'shelves', shelf.id)).toMatchObject({
      book_count: 3,
      pages_sum: 400,
      pages_min: 50,
    })
    await patchRecord('books', b3.id, { pages: 1000 })
    expect(await readRecord(server, owner.token, 'shelves', shelf.id)).toMatchObject({
      pages_sum: 1350,
      pages_max: 1000,
    })
    expect(
      (await server.request('DELETE', `/api/v1/collections/books/records/${b3.id}`, { token: owner.token })).status,
    ).toBe(200)
    expect(await readRecord(server, owner.token, 'shelves', shelf.id)).toMatchObject({ book_count: 2, pages_sum: 350 })
  })

  // min and max are accepted over date fields (resultType date): YYYY-MM-DD strings order as dates.
  it('rollup min over a date field gives the earliest date', async () => {
    const shelf = await createRecord(server, owner.token, 'shelves', { label: 'dated', books: [ids.b1, ids.b2] })
    expect(shelf.first_published).toBe('1999-03-02')
  })

  it('lookup and rollup fields are refused on write (400 invalid_field), on create and on update', async () => {
    const lookup = await postRecord(server, owner.token, 'books', { title: 'x', author_name: 'Forged' })
    expect(lookup.status).toBe(400)
    expect(lookup.body).toMatchObject({ error: 'invalid_field', details: { field: 'author_name' } })
    const rollup = await postRecord(server, owner.token, 'shelves', { label: 'x', book_count: 99 })
    expect(rollup.status).toBe(400)
    expect(rollup.body).toMatchObject({ error: 'invalid_field', details: { field: 'book_count' } })
    const shelf = await createRecord(server, owner.token, 'shelves', { label: 'real', books: [ids.b1] })
    const update = await patchRecord('shelves', shelf.id, { pages_sum: 1 })
    expect(update.status).toBe(400)
    expect(update.body.error).toBe('invalid_field')
    expect((await readRecord(server, owner.token, 'shelves', shelf.id)).pages_sum).toBe(100)
  })
})

describe('translatable text', () => {
  beforeAll(async () => {
    await createCollection(server, owner.token, {
      name: 'pages',
      fields: [
        field('title', 'text', { translatable: true }),
        field('blurb', 'richtext', { translatable: true, validationRules: { maxLength: 10 } }),
        field('handle', 'slug', { translatable: true }),
        field('plain', 'text'),
      ],
    })
  })
  const read = (id: string, locale?: string) =>
    readRecord(server, owner.token, 'pages', id, locale === undefined ? '' : `?locale=${encodeURIComponent(locale)}`)

  it('a string written with ?locale=fr is stored under fr; reads pick a locale, * gives the map, en is the default', async () => {
    const created = await createRecord(server, owner.token, 'pages', { title: 'Bonjour', plain: 'same' }, '?locale=fr')
    expect(created).toMatchObject({ title: 'Bonjour', plain: 'same' })
    expect((await read(created.id, 'fr')).title).toBe('Bonjour')
    expect((await read(created.id, '*')).title).toStrictEqual({ fr: 'Bonjour' })
    expect((await read(created.id)).title).toBeNull()
    expect((await read(created.id, 'en')).title).toBeNull()
    expect((await read(created.id)).plain).toBe('same')

    const english = await patchRecord('pages', created.id, { title: 'Hello' }, '?locale=en')
    expect(english.status, english.text).toBe(200)
    expect(english.body.title).toBe('Hello')
    expect((await read(created.id)).title).toBe('Hello')
    expect((await read(created.id, 'fr')).title).toBe('Bonjour')
    expect((await read(created.id, '*')).title).toStrictEqual({ fr: 'Bonjour', en: 'Hello' })

    const french = await patchRecord('pages', created.id, { title: 'Salut' }, '?locale=fr')
    expect(french.status).toBe(200)
    expect((await read(created.id, '*')).title).toStrictEqual({ fr: 'Salut', en: 'Hello' })
  })

  it('a string written without a locale lands in en', async () => {
    const created = await createRecord(server, owner.token, 'pages', { title: 'Plain English' })
    expect(created.title).toBe('Plain English')
    expect((await read(created.id, '*')).title).toStrictEqual({ en: 'Plain English' })
  })

  it('a locale map is stored as given and read per locale', async () => {
    const created = await createRecord(server, owner.token, 'pages', {
      title: { en: 'Hi', de: 'Hallo', 'pt-BR': 'Olá' },
      handle: { en: 'hi', de: 'hallo' },
    })
    expect(created.title).toBe('Hi')
    expect((await read(created.id, 'de')).title).toBe('Hallo')
    expect((await read(created.id, 'pt-BR')).title).toBe('Olá')
    expect((await read(created.id, 'it')).title).toBeNull()
    expect(await read(created.id, '*')).toMatchObject({
      title: { en: 'Hi', de: 'Hallo', 'pt-BR': 'Olá' },
      handle: { en: 'hi', de: 'hallo' },
    })
    const list = await records(
      'pages',
      `?locale=de&filter=${encodeURIComponent(JSON.stringify({ title: { _eq: 'Hallo' } }))}`,
    )
    expect(list.status, list.text).toBe(200)
    expect(list.body.data.map((r: { id: string; title: string }) => [r.id, r.title])).toEqual([[created.id, 'Hallo']])
  })

  const bad: [string, Record<string, unknown>, string, number, string][] = [
    ['a number', { title: 42 }, '', 400, 'invalid_field'],
    ['a list', { title: ['Hi'] }, '', 400, 'invalid_field'],
    ['a map with a key that is not a locale', { title: { 'not a locale': 'x' } }, '', 400, 'invalid_field'],
    ['a map with a non-string value', { title: { en: 1 } }, '', 400, 'invalid_field'],
    ['a string with locale=*', { title: 'Which?' }, '?locale=*', 400, 'invalid_field'],
    ['a slug in bad form in one locale', { handle: { en: 'fine', fr: 'Pas Bon' } }, '', 400, 'invalid_field'],
    [
      'a value over maxLength in one locale',
      { blurb: { en: 'short', de: 'much too long here' } },
      '',
      422,
      'validation_error',
    ],
    ['a string over maxLength', { blurb: 'much too long here' }, '?locale=fr', 422, 'validation_error'],
    ['an unusable locale', { title: 'x' }, '?locale=not_a_locale!', 400, 'invalid_request'],
  ]
  runScenarios(
    () => server,
    bad.map(
      ([what, body, query, status, error]): Scenario => ({
        name: `translatable refuses ${what}`,
        method: 'POST',
        path: `/api/v1/collections/pages/records${query}`,
        as: () => owner.token,
        body,
        status,
        contains: { error },
      }),
    ),
  )
})
