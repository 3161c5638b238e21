import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { recordsPath } from './records-fixtures.js'

// Filter values against the field types they compare with (docs/query-language.md): the items of an
// array-format comma-separated `in` list are converted to the field's kind, and a value a field can never
// hold is 400 invalid_request instead of silently matching nothing. Page and cursor lists alike.

let server: TestServer
let owner: Account
const ids: Record<string, string> = {}

const list = (query: Record<string, string>) =>
  server.request('GET', recordsPath('items', undefined, { limit: 100, ...query }), { token: owner.token })
const byFilter = (filter: unknown, extra: Record<string, string> = {}) =>
  list({ filter: JSON.stringify(filter), ...extra })

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const fields = [
    { name: 'title', type: 'text', required: true },
    { name: 'views', type: 'integer', required: false },
    { name: 'ratio', type: 'number', required: false },
    { name: 'published', type: 'boolean', required: false },
    { name: 'pubdate', type: 'date', required: false },
    { name: 'seen', type: 'datetime', required: false },
    { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'published'] },
    { name: 'meta', type: 'json', required: false },
    { name: 'label', type: 'text', required: false, translatable: true },
  ]
  const created = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: { name: 'items', fields },
  })
  expect(created.status, created.text).toBe(201)
  const rows: Record<string, Record<string, unknown>> = {
    zero: {
      title: 'a',
      views: 0,
      ratio: 0.5,
      published: true,
      pubdate: '2024-01-01',
      seen: 100,
      status: 'draft',
      meta: { n: 1, s: '1' },
      label: { en: 'Zero' },
    },
    ten: {
      title: 'b',
      views: 10,
      ratio: 1,
      published: false,
      pubdate: '2024-02-01',
      seen: 200,
      status: 'published',
      meta: { n: 2 },
      label: { en: 'Ten' },
    },
    five: { title: 'a,b', views: 5, ratio: 2.5, published: true, pubdate: null, seen: null, status: null, meta: null },
  }
  for (const [key, body] of Object.entries(rows)) {
    const reply = await server.request('POST', recordsPath('items'), { token: owner.token, body })
    expect(reply.status, reply.text).toBe(201)
    ids[key] = reply.body.id
  }
})
afterAll(async () => {
  await server?.stop()
})

const idsOf = (data: { id: string }[]) => data.map((r) => r.id).sort()
const expected = (...keys: string[]) => keys.map((k) => ids[k]!).sort()

describe('array format: a comma-separated in list takes the kind of its field', () => {
  const rows: { name: string; field: string; value: string; matches: string[] }[] = [
    { name: 'integers', field: 'views', value: '0,10', matches: ['zero', 'ten'] },
    { name: 'integers, spaces trimmed', field: 'views', value: ' 5 , 10 ', matches: ['five', 'ten'] },
    { name: 'numbers', field: 'ratio', value: '0.5,1', matches: ['zero', 'ten'] },
    { name: 'a number written as a whole one', field: 'ratio', value: '2.50', matches: ['five'] },
    { name: 'booleans', field: 'published', value: 'true', matches: ['zero', 'five'] },
    { name: 'both booleans', field: 'published', value: 'false,true', matches: ['zero', 'ten', 'five'] },
    { name: 'datetime (Unix seconds)', field: 'seen', value: '100,200', matches: ['zero', 'ten'] },
    { name: 'text stays text', field: 'title', value: 'a,b', matches: ['zero', 'ten'] },
    { name: 'dates stay text', field: 'pubdate', value: '2024-01-01,2024-02-01', matches: ['zero', 'ten'] },
    { name: 'enum choices', field: 'status', value: 'draft', matches: ['zero'] },
    { name: 'a system column', field: 'created_at', value: '1', matches: [] },
  ]
  it.each(rows)('$name', async ({ field, value, matches }) => {
    for (const extra of [{}, { cursor: '' }] as Record<string, string>[]) {
      const reply = await byFilter([{ field, op: 'in', value }], extra)
      expect(reply.status, reply.text).toBe(200)
      expect(idsOf(reply.body.data)).toEqual(expected(...matches))
    }
  })

  const refused: { name: string; field: string; value: string }[] = [
    { name: 'a word in an integer list', field: 'views', value: '0,abc' },
    { name: 'a fraction in an integer list', field: 'views', value: '1.5' },
    { name: 'a hexadecimal number', field: 'views', value: '0x10' },
    { name: 'an empty item in a number list', field: 'ratio', value: '1,,2' },
    { name: 'Infinity', field: 'ratio', value: 'Infinity' },
    { name: 'yes for a boolean', field: 'published', value: 'yes' },
    { name: '1 for a boolean', field: 'published', value: '1' },
    { name: 'not a date', field: 'pubdate', value: '2024-01-01,soon' },
    { name: 'not a choice', field: 'status', value: 'draft,gone' },
  ]
  it.each(refused)('$name → 400 invalid_request naming the field', async ({ field, value }) => {
    const reply = await byFilter([{ field, op: 'in', value }])
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error).toBe('invalid_request')
    expect(reply.body.message).toContain(field)
  })
})

describe('a value the field can never hold is 400 invalid_request', () => {
  const refused: { name: string; filter: unknown }[] = [
    { name: 'a boolean ordered against a number', filter: { views: { _gt: true } } },
    { name: 'text for an integer', filter: { views: 'abc' } },
    { name: 'a numeral as text for an integer', filter: { views: '10' } },
    { name: 'text for a number', filter: { ratio: { _lt: 'x' } } },
    { name: 'text for a boolean', filter: { published: 'yes' } },
    { name: 'a number for a boolean', filter: { published: 1 } },
    { name: 'a number for a date', filter: { pubdate: { _gt: 5 } } },
    { name: 'a date not as YYYY-MM-DD', filter: { pubdate: '01/02/2024' } },
    { name: 'not a calendar date', filter: { pubdate: { _lte: '2024-02-30' } } },
    { name: '$NOW for a date', filter: { pubdate: { _lte: '$NOW' } } },
    { name: 'a value outside the choices', filter: { status: 'notanenum' } },
    { name: 'a value outside the choices in _in', filter: { status: { _in: ['draft', 'nope'] } } },
    { name: 'a text operator on a number', filter: { views: { _contains: '1' } } },
    { name: 'a text operator on a boolean', filter: { published: { _starts_with: 't' } } },
    { name: 'a word for Unix seconds', filter: { created_at: { _gt: 'yesterday' } } },
    { name: 'a date for a datetime field', filter: { seen: { _gt: '2024-01-01' } } },
    { name: '$NOW_DATE for a datetime field', filter: { seen: { _lt: '$NOW_DATE' } } },
    { name: '$CURRENT_USER for a number', filter: { views: '$CURRENT_USER' } },
    { name: 'a number for a translatable text', filter: { label: 5 } },
    { name: 'a number in an _in list of text', filter: { title: { _in: ['a', 1] } } },
    { name: 'array format: text ordered against a number', filter: [{ field: 'views', op: 'gt', value: 'abc' }] },
    {
      name: 'array format: between with text bounds on a number',
      filter: [{ field: 'views', op: 'between', value: 'a', valueTo: 'z' }],
    },
    { name: 'array format: text operator on a number', filter: [{ field: 'views', op: 'starts_with', value: '1' }] },
  ]
  it.each(refused)('$name', async ({ filter }) => {
    for (const extra of [{}, { cursor: '' }] as Record<string, string>[]) {
      const reply = await byFilter(filter, extra)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
    }
  })

  const accepted: { name: string; filter: unknown; matches: string[] }[] = [
    { name: 'a number for an integer', filter: { views: { _gte: 5 } }, matches: ['ten', 'five'] },
    { name: 'a fraction ordered against an integer', filter: { views: { _lt: 0.5 } }, matches: ['zero'] },
    { name: 'a boolean', filter: { published: false }, matches: ['ten'] },
    { name: 'a date as YYYY-MM-DD', filter: { pubdate: { _gt: '2024-01-15' } }, matches: ['ten'] },
    { name: '$NOW_DATE for a date', filter: { pubdate: { _lte: '$NOW_DATE' } }, matches: ['zero', 'ten'] },
    { name: 'a text operator on a date', filter: { pubdate: { _starts_with: '2024-02' } }, matches: ['ten'] },
    { name: 'Unix seconds for a datetime field', filter: { seen: { _gt: 150 } }, matches: ['ten'] },
    { name: '$NOW for created_at', filter: { created_at: { _lte: '$NOW' } }, matches: ['zero', 'ten', 'five'] },
    { name: 'a choice', filter: { status: 'published' }, matches: ['ten'] },
    { name: 'any text ordered against an enum', filter: { status: { _gt: 'e' } }, matches: ['ten'] },
    { name: 'a text operator on an enum', filter: { status: { _starts_with: 'pub' } }, matches: ['ten'] },
    { name: 'translatable text in the locale', filter: { label: 'Ten' }, matches: ['ten'] },
    { name: 'a JSON path takes any value: a number', filter: { 'meta.n': 1 }, matches: ['zero'] },
    { name: 'a JSON path takes any value: text (matches only text)', filter: { 'meta.s': '1' }, matches: ['zero'] },
    { name: 'a JSON path takes any value: no coercion', filter: { 'meta.n': '1' }, matches: [] },
    { name: 'null matches nothing, of any field', filter: { views: null }, matches: [] },
    { name: '_eq null matches nothing', filter: { pubdate: { _eq: null } }, matches: [] },
    { name: '_null', filter: { pubdate: { _null: true } }, matches: ['five'] },
    { name: '_nnull on an enum', filter: { status: { _nnull: true } }, matches: ['zero', 'ten'] },
    { name: 'array format: empty on a number', filter: [{ field: 'seen', op: 'empty' }], matches: ['five'] },
    {
      name: 'array format: between numbers',
      filter: [{ field: 'views', op: 'between', value: 1, valueTo: 10 }],
      matches: ['ten', 'five'],
    },
  ]
  it.each(accepted)('$name is accepted', async ({ filter, matches }) => {
    const reply = await byFilter(filter)
    expect(reply.status, reply.text).toBe(200)
    expect(idsOf(reply.body.data)).toEqual(expected(...matches))
  })
})
