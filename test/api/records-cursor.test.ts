import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, expectError, freshName, recordsPath } from './records-fixtures.js'

let server: TestServer
let owner: Account
const { get } = client(() => server)

type Row = Record<string, any>
type Query = Record<string, string | number>

/**
 * 23 records: names with duplicates, nulls, upper case and non-ASCII; created_at in groups of three equal
 * values (ties broken by id); a decimal and an integer with duplicates and nulls.
 */
const walkName = 'walk'
const names = [
  'pear',
  'apple',
  null,
  'Apple',
  'pear',
  'kiwi',
  null,
  'apple',
  'éclair',
  'zebra',
  'pear',
  null,
  'kiwi',
  'Zulu',
  'banana',
  'apple',
  'mango',
  null,
  'pear',
  'fig',
  'fig',
  'Ω',
  'a',
]
const prices = [1.5, 2, null, 2, 10.25, 0.5, 3, null, 2, 7, 1.5, 0, 99.9, null, 2, 4, 4, 5, null, 1.5, 8, 2, 6]
let rows: Row[] = []

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, walkName, [
    { name: 'name', type: 'text', required: false },
    { name: 'price', type: 'decimal', required: false },
    { name: 'n', type: 'integer', required: false },
    { name: 'flag', type: 'boolean', required: false },
  ])
  rows = []
  for (let i = 0; i < names.length; i++) {
    rows.push(
      await createRecord(server, owner.token, walkName, {
        name: names[i],
        price: prices[i],
        n: i % 5,
        flag: [true, false, null][i % 3],
        created_at: 7000 + Math.floor(i / 3),
      }),
    )
  }
})
afterAll(async () => {
  await server?.stop()
})

const page = (collection: string, query: Query) => get(recordsPath(collection, undefined, query), owner.token)

/** Code point order of two strings (JavaScript compares UTF-16 units; these names are all in the BMP). */
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The order the keyset promises: by value (empty first going up), ties by id; descending is its reverse. */
function expectedOrder(records: Row[], field: string, direction: 'asc' | 'desc'): string[] {
  const compare = (x: Row, y: Row) => {
    const a = x[field]
    const b = y[field]
    if ((a === null) !== (b === null)) return a === null ? -1 : 1
    if (a !== null && a !== b) return typeof a === 'string' ? byCodePoint(a, b) : a - b
    return byCodePoint(x.id, y.id)
  }
  const ordered = [...records].sort(compare)
  return (direction === 'asc' ? ordered : ordered.reverse()).map((r) => r.id)
}

interface Walk {
  pages: Row[][]
  ids: string[]
  /** The cursors of each page, as answered. */
  cursors: { next: string | null; previous: string | null }[]
}

/** Follows `next` from `cursor=` to the end, checking the envelope of every page. */
async function walkForward(collection: string, query: Query, between?: (sofar: Walk) => Promise<void>): Promise<Walk> {
  const walk: Walk = { pages: [], ids: [], cursors: [] }
  let cursor: string | null = ''
  while (cursor !== null) {
    const reply = await page(collection, { ...query, cursor })
    expect(reply.status, reply.text).toBe(200)
    const body = reply.body
    expect(body).toMatchObject({ total: -1, page: 1, limit: Number(query.limit ?? 25) })
    expect(Object.keys(body.cursors).sort()).toEqual(['next', 'previous'])
    expect(body.hasMore).toBe(body.cursors.next !== null)
    if (walk.pages.length === 0) expect(body.cursors.previous).toBeNull()
    else expect(body.cursors.previous).toEqual(expect.any(String))
    walk.pages.push(body.data)
    walk.ids.push(...body.data.map((r: Row) => r.id))
    walk.cursors.push(body.cursors)
    expect(walk.pages.length).toBeLessThan(100)
    cursor = body.cursors.next
    if (cursor !== null && between) await between(walk)
  }
  return walk
}

describe('cursor mode', () => {
  it('?cursor= starts keyset mode: total is -1, cursors next and previous', async () => {
    const reply = await page(walkName, { cursor: '', limit: 5 })
    expect(reply.status, reply.text).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual(['cursors', 'data', 'hasMore', 'limit', 'page', 'total'])
    expect(reply.body).toMatchObject({
      total: -1,
      limit: 5,
      hasMore: true,
      cursors: { next: expect.any(String), previous: null },
    })
    expect(reply.body.data).toHaveLength(5)
    // Page mode has no cursors and counts.
    const paged = await page(walkName, { limit: 5 })
    expect(paged.body).not.toHaveProperty('cursors')
    expect(paged.body.total).toBe(names.length)
  })

  it('a list that fits one page has neither cursor', async () => {
    const reply = await page(walkName, { cursor: '', limit: 100 })
    expect(reply.body).toMatchObject({ total: -1, hasMore: false, cursors: { next: null, previous: null } })
    expect(reply.body.data).toHaveLength(names.length)
    const empty = await page(walkName, { cursor: '', filter: JSON.stringify({ name: 'nothing' }) })
    expect(empty.body).toMatchObject({ data: [], total: -1, hasMore: false, cursors: { next: null, previous: null } })
  })

  const walks: { name: string; query: Query; field: string; direction: 'asc' | 'desc' }[] = [
    {
      name: 'the default sort (created_at descending, with ties)',
      query: { limit: 4 },
      field: 'created_at',
      direction: 'desc',
    },
    {
      name: 'created_at ascending',
      query: { limit: 5, sortBy: 'created_at', order: 'asc' },
      field: 'created_at',
      direction: 'asc',
    },
    {
      name: 'a text field ascending, with duplicates and nulls',
      query: { limit: 3, sortBy: 'name', order: 'asc' },
      field: 'name',
      direction: 'asc',
    },
    {
      name: 'a text field descending, with duplicates and nulls',
      query: { limit: 3, sortBy: '-name' },
      field: 'name',
      direction: 'desc',
    },
    {
      name: 'a text field, one row per page',
      query: { limit: 1, sortBy: 'name', order: 'asc' },
      field: 'name',
      direction: 'asc',
    },
    {
      name: 'a decimal field ascending',
      query: { limit: 4, sortBy: 'price', order: 'asc' },
      field: 'price',
      direction: 'asc',
    },
    {
      name: 'a decimal field descending',
      query: { limit: 4, sortBy: 'price', order: 'desc' },
      field: 'price',
      direction: 'desc',
    },
    {
      name: 'an integer field ascending',
      query: { limit: 6, sortBy: 'n', order: 'asc' },
      field: 'n',
      direction: 'asc',
    },
    {
      name: 'a boolean field descending, with nulls',
      query: { limit: 4, sortBy: '-flag' },
      field: 'flag',
      direction: 'desc',
    },
  ]
  for (const w of walks) {
    it(`following next returns every row exactly once, in order: ${w.name}`, async () => {
      const walk = await walkForward(walkName, w.query)
      expect(walk.ids).toEqual(expectedOrder(rows, w.field, w.direction))
      expect(new Set(walk.ids).size).toBe(names.length)
      expect(walk.cursors.at(-1)!.next).toBeNull()
      // Page mode orders the same way.
      const paged = await page(walkName, { ...w.query, limit: 100 })
      expect(paged.body.data.map((r: Row) => r.id)).toEqual(walk.ids)
    })
  }

  it('a filter narrows the walk', async () => {
    const filter = JSON.stringify({ price: { _gte: 2 } })
    const walk = await walkForward(walkName, { limit: 2, sortBy: 'name', order: 'asc', filter })
    expect(walk.ids).toEqual(
      expectedOrder(
        rows.filter((r) => r.price !== null && r.price >= 2),
        'name',
        'asc',
      ),
    )
  })

  for (const w of walks.slice(0, 4)) {
    it(`following previous walks back page by page: ${w.name}`, async () => {
      const forward = await walkForward(walkName, w.query)
      const back: Row[][] = [forward.pages.at(-1)!]
      let cursor = forward.cursors.at(-1)!.previous
      while (cursor !== null) {
        const reply = await page(walkName, { ...w.query, cursor })
        expect(reply.status, reply.text).toBe(200)
        expect(reply.body.total).toBe(-1)
        // A page reached backwards can always go forward again.
        expect(reply.body.cursors.next).toEqual(expect.any(String))
        back.unshift(reply.body.data)
        cursor = reply.body.cursors.previous
        expect(back.length).toBeLessThan(100)
      }
      expect(back.map((p) => p.map((r) => r.id))).toEqual(forward.pages.map((p) => p.map((r) => r.id)))
      // And next from a page reached backwards continues where it should.
      const second = await page(walkName, { ...w.query, cursor: forward.cursors[1]!.previous! })
      expect(second.body.data.map((r: Row) => r.id)).toEqual(forward.pages[0]!.map((r) => r.id))
      expect(second.body.cursors.previous).toBeNull()
      const again = await page(walkName, { ...w.query, cursor: second.body.cursors.next })
      expect(again.body.data.map((r: Row) => r.id)).toEqual(forward.pages[1]!.map((r) => r.id))
    })
  }

  describe('a tampered or foreign cursor is 400', () => {
    let real: string
    beforeAll(async () => {
      real = (await page(walkName, { cursor: '', limit: 3, sortBy: 'name', order: 'asc' })).body.cursors.next
      expect(real).toEqual(expect.any(String))
    })
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const bad = (): { name: string; cursor: string; query?: Query }[] => {
      const decoded = JSON.parse(Buffer.from(real, 'base64url').toString('utf8')) as unknown[]
      return [
        { name: 'a changed character', cursor: `X${real.slice(1)}` },
        { name: 'cut short', cursor: real.slice(0, Math.floor(real.length / 2)) },
        { name: 'not base64url', cursor: 'not a cursor!' },
        { name: 'base64 of something else', cursor: Buffer.from('hello').toString('base64url') },
        { name: 'a re-encoded cursor with a bad direction', cursor: encode([decoded[0], 7, decoded[2], decoded[3]]) },
        { name: 'a re-encoded cursor with an object value', cursor: encode([decoded[0], 1, { $gt: '' }, decoded[3]]) },
        { name: 'a re-encoded cursor with a missing part', cursor: encode(decoded.slice(0, 3)) },
        { name: 'a re-encoded cursor with a number for a text sort', cursor: encode([decoded[0], 1, 5, decoded[3]]) },
        {
          name: 'a re-encoded cursor with a boolean for a text sort',
          cursor: encode([decoded[0], 1, true, decoded[3]]),
        },
        {
          name: 'a re-encoded cursor with text for a number sort',
          cursor: encode(['created_at:asc', 1, 'soon', decoded[3]]),
          query: { sortBy: 'created_at', order: 'asc' },
        },
        {
          name: 'a re-encoded cursor with text for a decimal sort',
          cursor: encode(['price:asc', 1, 'cheap', decoded[3]]),
          query: { sortBy: 'price', order: 'asc' },
        },
        {
          name: 'a re-encoded cursor with a number for a boolean sort',
          cursor: encode(['flag:asc', 1, 2, decoded[3]]),
          query: { sortBy: 'flag', order: 'asc' },
        },
        { name: 'a cursor of another sort field', cursor: real, query: { sortBy: 'created_at', order: 'asc' } },
        { name: 'a cursor of the other direction', cursor: real, query: { sortBy: 'name', order: 'desc' } },
      ]
    }
    it('each way of getting it wrong', async () => {
      for (const c of bad()) {
        const reply = await page(walkName, { limit: 3, sortBy: 'name', order: 'asc', ...c.query, cursor: c.cursor })
        expect(reply.status, `${c.name}: ${reply.text}`).toBe(400)
        expect(reply.body.error, c.name).toBe('invalid_request')
      }
      // The real one works where it belongs.
      expect((await page(walkName, { limit: 3, sortBy: 'name', order: 'asc', cursor: real })).status).toBe(200)
    })
  })

  describe('rows inserted while walking', () => {
    it('by name: every original row is seen exactly once; rows inserted ahead are seen, behind are not', async () => {
      const name = await createCollection(server, owner.token, freshName('moving'), [
        { name: 'name', type: 'text', required: false },
      ])
      const originals: Row[] = []
      for (const n of ['b', 'd', 'd', 'f', null, 'h', 'j', 'd', 'l', 'n', null, 'p'])
        originals.push(await createRecord(server, owner.token, name, { name: n }))
      const inserted: { behind: string[]; ahead: string[] } = { behind: [], ahead: [] }
      const walk = await walkForward(name, { limit: 3, sortBy: 'name', order: 'asc' }, async (sofar) => {
        // Between pages: one row before everything (behind), one after everything (ahead), and one with the
        // same value as the last row seen (it lands behind or ahead by its id).
        const pageIndex = sofar.pages.length
        const last = sofar.pages.at(-1)!.at(-1)!.name as string | null
        inserted.behind.push((await createRecord(server, owner.token, name, { name: `a${pageIndex}` })).id)
        // Ahead: a later name, or once the walk is among the empty names (they come last), an empty name
        // with an id after every generated one.
        const ahead =
          last === null
            ? { name: null, id: `zz${String(pageIndex).padStart(4, '0')}` }
            : { name: `z${String(pageIndex).padStart(4, '0')}` }
        inserted.ahead.push((await createRecord(server, owner.token, name, ahead)).id)
        await createRecord(server, owner.token, name, { name: last })
      })
      const counts = new Map<string, number>()
      for (const id of walk.ids) counts.set(id, (counts.get(id) ?? 0) + 1)
      expect([...counts.values()].every((c) => c === 1)).toBe(true)
      for (const original of originals) expect(counts.get(original.id), original.name).toBe(1)
      for (const id of inserted.behind) expect(counts.has(id)).toBe(false)
      for (const id of inserted.ahead) expect(counts.get(id)).toBe(1)
      // The originals come in their order.
      expect(walk.ids.filter((id) => originals.some((o) => o.id === id))).toEqual(
        expectedOrder(originals, 'name', 'asc'),
      )
    })

    it('by the default sort (newest first): every original row is seen exactly once', async () => {
      const name = await createCollection(server, owner.token, freshName('feed'), [
        { name: 'name', type: 'text', required: false },
      ])
      const originals: Row[] = []
      for (let i = 0; i < 10; i++)
        originals.push(
          await createRecord(server, owner.token, name, { name: `o${i}`, created_at: 1000 + Math.floor(i / 2) }),
        )
      const fresh: string[] = []
      const walk = await walkForward(name, { limit: 3 }, async (sofar) => {
        fresh.push((await createRecord(server, owner.token, name, { name: 'new' })).id)
        // Each older than everything so far, so always ahead of the cursor.
        fresh.push(
          (await createRecord(server, owner.token, name, { name: 'old', created_at: 500 - sofar.pages.length })).id,
        )
      })
      const counts = new Map<string, number>()
      for (const id of walk.ids) counts.set(id, (counts.get(id) ?? 0) + 1)
      expect([...counts.values()].every((c) => c === 1)).toBe(true)
      expect(walk.ids.filter((id) => !fresh.includes(id))).toEqual(expectedOrder(originals, 'created_at', 'desc'))
      // Newer rows land before the cursor (unseen); older ones after it (seen).
      const newest = fresh.filter((_, i) => i % 2 === 0)
      const oldest = fresh.filter((_, i) => i % 2 === 1)
      for (const id of newest) expect(counts.has(id)).toBe(false)
      for (const id of oldest) expect(counts.get(id)).toBe(1)
    })
  })

  it('limit over 100 is 400 in cursor mode too', async () => {
    expectError(await page(walkName, { cursor: '', limit: 101 }), 400, 'invalid_request')
  })
})
