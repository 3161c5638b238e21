import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { structures } from '../collections/index.js'
import { enumColumnPredicate, jsonPredicate } from './predicate.js'

// The narrowing predicate must let through every row the check in JavaScript finds wrong. This runs each
// shape's predicate over a table of values on a real database and compares it with the check: here it is
// exact (TRUE exactly for the wrong values), which is stronger than a scan needs.

const shape = (input: unknown): structures.Shape => {
  const parsed = structures.parseStructure({ shape: input })
  if (!parsed.ok) throw new Error(parsed.message)
  return parsed.structure.shape
}

const cases: { name: string; shape: structures.Shape; values: unknown[] }[] = [
  {
    name: 'enum at the root',
    shape: shape({ type: 'enum', values: ['a', 'b c', 'it\'s "quoted"'] }),
    values: ['a', 'b c', 'it\'s "quoted"', 'A', '', 1, true, false, null, [], ['a'], {}, { a: 1 }],
  },
  {
    name: 'scalars in an object',
    shape: shape({ type: 'object', entries: { s: { type: 'string' }, n: { type: 'number' }, b: { type: 'boolean' } } }),
    values: [
      {},
      { s: 'x' },
      { s: 1 },
      { n: 1.5 },
      { n: '1' },
      { b: false },
      { b: 0 },
      { s: null, n: null },
      { s: [] },
      { extra: 1 },
      [],
      'x',
      3,
    ],
  },
  {
    name: 'an open object with odd keys',
    shape: shape({
      type: 'object',
      additional: true,
      entries: {
        'a "b"': { type: 'enum', values: ['x'] },
        'dot.key': { type: 'number' },
        'back\\slash': { type: 'boolean' },
      },
    }),
    values: [
      { 'a "b"': 'x' },
      { 'a "b"': 'y' },
      { 'dot.key': 1, other: 'anything' },
      { 'dot.key': 'one' },
      { 'back\\slash': true },
      { 'back\\slash': 'no' },
      { other: [1] },
    ],
  },
  {
    name: 'a closed object with no entries',
    shape: shape({ type: 'object', entries: {} }),
    values: [{}, { a: 1 }, [], null],
  },
  {
    name: 'a list of enums',
    shape: shape({ type: 'list', items: { type: 'enum', values: ['Forest', 'Desert'] } }),
    values: [
      [],
      ['Forest'],
      ['Forest', 'Desert', 'Forest'],
      ['Fores'],
      ['Forest', null],
      ['Forest', 1],
      [true],
      [['Forest']],
      'Forest',
      {},
    ],
  },
  {
    name: 'a list of objects with lists inside',
    shape: shape({
      type: 'list',
      items: { type: 'object', entries: { tags: { type: 'list', items: { type: 'string' } }, n: { type: 'number' } } },
    }),
    values: [
      [{ tags: ['a'], n: 1 }],
      [{ tags: [1] }],
      [{ tags: 'a' }],
      [{ n: 'x' }],
      [{ zz: 1 }],
      [{}, {}],
      [{ tags: [] }, 5],
      [{ tags: ['a', null] }],
    ],
  },
  {
    name: 'a map of numbers keyed by an enum',
    shape: shape({ type: 'map', keys: { type: 'enum', values: ['red', 'green'] }, values: { type: 'number' } }),
    values: [{}, { red: 1 }, { red: 1, green: 2.5 }, { gren: 1 }, { red: 'x' }, { red: null }, { red: [1] }, [], 'red'],
  },
  {
    name: 'a map of objects',
    shape: shape({
      type: 'map',
      keys: { type: 'enum', values: ['x'] },
      values: { type: 'object', entries: { k: { type: 'enum', values: ['v'] } } },
    }),
    values: [{ x: {} }, { x: { k: 'v' } }, { x: { k: 'w' } }, { x: { j: 'v' } }, { x: 1 }, { y: { k: 'v' } }],
  },
]

for (const kind of dialects()) {
  describe(`narrowing predicate on ${kind}`, () => {
    let fixture: DialectFixture
    let db: Kysely<any>
    beforeAll(async () => {
      fixture = await openFixture(kind)
      db = fixture.db
      await db.schema
        .createTable('docs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('doc', sql.raw(kind === 'sqlite' ? 'text' : 'jsonb'))
        .addColumn('word', 'text')
        .execute()
    })
    afterAll(async () => {
      await fixture?.close()
    })

    for (const c of cases) {
      it(c.name, async () => {
        await db.deleteFrom('docs').execute()
        const rows = c.values.map((value, i) => ({
          id: `r${String(i).padStart(2, '0')}`,
          doc: value === null ? null : JSON.stringify(value),
          word: null,
        }))
        await db.insertInto('docs').values(rows).execute()
        const predicate = jsonPredicate(kind, sql.ref('docs.doc'), c.shape)
        expect(predicate).not.toBeNull()
        const hits = await db.selectFrom('docs').select('id').where(predicate!).orderBy('id').execute()
        const wrong = rows
          .filter((_, i) => c.values[i] !== null && structures.firstIssue(c.values[i], c.shape) !== null)
          .map((r) => r.id)
        expect(hits.map((h) => h.id)).toEqual(wrong)
      })
    }

    it('an enum column', async () => {
      await db.deleteFrom('docs').execute()
      await db
        .insertInto('docs')
        .values(['open', 'Open', null, 'closed', ''].map((word, i) => ({ id: `w${i}`, doc: null, word })))
        .execute()
      const hits = await db
        .selectFrom('docs')
        .select('id')
        .where(enumColumnPredicate(sql.ref('docs.word'), ['open', 'closed'])!)
        .orderBy('id')
        .execute()
      expect(hits.map((h) => h.id)).toEqual(['w1', 'w4'])
    })

    if (kind === 'sqlite') {
      it('text that is not JSON is let through, not an error', async () => {
        await db.deleteFrom('docs').execute()
        await db
          .insertInto('docs')
          .values([
            { id: 'x1', doc: '{not json', word: null },
            { id: 'x2', doc: '"a"', word: null },
          ])
          .execute()
        const hits = await db
          .selectFrom('docs')
          .select('id')
          .where(jsonPredicate(kind, sql.ref('docs.doc'), shape({ type: 'enum', values: ['a'] }))!)
          .execute()
        expect(hits.map((h) => h.id)).toEqual(['x1'])
      })
    }
  })
}

describe('narrowing predicate limits', () => {
  it('gives up (null) past 5000 bound values', () => {
    const values = Array.from({ length: 1000 }, (_, i) => `v${i}`)
    const big = shape({
      type: 'object',
      entries: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`e${i}`, { type: 'enum', values }])),
    })
    expect(jsonPredicate('sqlite', sql.ref('t.doc'), big)).toBeNull()
    expect(jsonPredicate('sqlite', sql.ref('t.doc'), shape({ type: 'enum', values }))).not.toBeNull()
  })
})
