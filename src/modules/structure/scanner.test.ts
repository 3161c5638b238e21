import { describe, expect, it } from 'vitest'
import type { FieldDef } from '../collections/index.js'
import { fieldStructure, fingerprintOf } from './field-structure.js'
import { GroupSet, groupLimits, presentGroup } from './groups.js'
import { scanBatch, type RowSource, type ScanRow } from './scanner.js'

const status = fieldStructure({
  name: 'status',
  type: 'enum',
  required: false,
  unique: false,
  indexed: false,
  enumValues: ['open', 'closed'],
})!
const tags = fieldStructure({
  name: 'tags',
  type: 'multi_enum',
  required: false,
  unique: false,
  indexed: false,
  enumValues: ['a'],
})!

/** Rows in id order, served like the candidates query: after an id, a count at a time. */
function source(rows: ScanRow[]): RowSource & { queries: number } {
  const out = {
    queries: 0,
    async next(after: string | null, count: number) {
      out.queries++
      return rows.filter((r) => after === null || r.id > after).slice(0, count)
    },
  }
  return out
}
const row = (n: number, value: unknown, bytes = 10): ScanRow => ({ id: `r${String(n).padStart(4, '0')}`, value, bytes })

describe('scanBatch', () => {
  it('examines up to the limit and knows whether rows are left', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(i, i % 2 === 0 ? 'Open' : 'open'))
    const groups = new GroupSet(status)
    const first = await scanBatch(source(rows), status, groups, null, 3)
    expect(first).toEqual({ checked: 3, invalid: 2, lastId: 'r0002', done: false })
    const second = await scanBatch(source(rows), status, groups, first.lastId, 3)
    expect(second).toEqual({ checked: 2, invalid: 1, lastId: 'r0004', done: true })
    // Exactly at the limit with nothing after: done, found by looking for one more row.
    expect(await scanBatch(source(rows.slice(0, 3)), status, new GroupSet(status), null, 3)).toMatchObject({
      checked: 3,
      done: true,
    })
    expect(groups.list().map(presentGroup)).toEqual([
      {
        code: 'enum',
        path: '$',
        detail: expect.any(String),
        count: 3,
        suggestion: 'open',
        sampleIds: ['r0000', 'r0002', 'r0004'],
        from: 'Open',
      },
    ])
  })

  it('stops before the row that passes the byte cap, but always examines one', async () => {
    const rows = [row(1, 'x', 60), row(2, 'x', 60), row(3, 'x', 500)]
    expect(await scanBatch(source(rows), status, new GroupSet(status), null, 100, 100)).toMatchObject({
      checked: 1,
      lastId: 'r0001',
      done: false,
    })
    expect(await scanBatch(source(rows), status, new GroupSet(status), 'r0002', 100, 100)).toMatchObject({
      checked: 1,
      lastId: 'r0003',
      done: true,
    })
  })

  it('an empty source is done at once', async () => {
    expect(await scanBatch(source([]), status, new GroupSet(status), null, 200)).toEqual({
      checked: 0,
      invalid: 0,
      lastId: null,
      done: true,
    })
  })

  it('reads in chunks of 50 rows', async () => {
    const many = source(Array.from({ length: 120 }, (_, i) => row(i, 'open')))
    await scanBatch(many, status, new GroupSet(status), null, 200)
    expect(many.queries).toBe(3)
  })
})

describe('GroupSet', () => {
  it('counts a record once per group however often it has the problem; a multi_enum reports at $', async () => {
    const groups = new GroupSet(tags)
    groups.add('x', [])
    expect(groups.size).toBe(0)
    await scanBatch(source([row(1, ['b', 'b', 'a', 'b']), row(2, ['b']), row(3, ['c'])]), tags, groups, null, 10)
    expect(groups.list().map(presentGroup)).toEqual([
      {
        code: 'enum',
        path: '$',
        detail: expect.stringContaining('"b"'),
        count: 2,
        suggestion: null,
        sampleIds: ['r0001', 'r0002'],
      },
      {
        code: 'enum',
        path: '$',
        detail: expect.stringContaining('"c"'),
        count: 1,
        suggestion: null,
        sampleIds: ['r0003'],
      },
    ])
  })

  it('keeps at most 5 sample ids, and folds values past 100 groups into one', async () => {
    const rows = Array.from({ length: 130 }, (_, i) => row(i, `v${i}`))
    rows.push(...Array.from({ length: 8 }, (_, i) => row(500 + i, 'v0')))
    const groups = new GroupSet(status)
    await scanBatch(source(rows), status, groups, null, 1000)
    expect(groups.size).toBe(groupLimits.groups + 1)
    const list = groups.list()
    expect(list[0]).toMatchObject({ count: 30, suggestion: null, detail: expect.stringContaining('other values') })
    expect(list[0]!.sampleIds).toHaveLength(5)
    expect(list[1]).toMatchObject({ count: 9, detail: expect.stringContaining('"v0"') })
    expect(list[1]!.sampleIds).toHaveLength(5)
    // A stored list comes back as it was.
    expect(new GroupSet(status, list).list()).toEqual(list)
  })
})

describe('fingerprintOf', () => {
  it('ignores labels and the order of entries and enum values', () => {
    const a = fingerprintOf({
      type: 'object',
      additional: false,
      entries: { x: { type: 'enum', values: [{ value: 'a' }, { value: 'b', label: 'Bee' }] }, y: { type: 'number' } },
    })
    const b = fingerprintOf({
      type: 'object',
      additional: false,
      entries: { y: { type: 'number', label: 'Why' }, x: { type: 'enum', values: [{ value: 'b' }, { value: 'a' }] } },
    })
    expect(a).toBe(b)
    expect(fingerprintOf({ type: 'enum', values: [{ value: 'a' }] })).not.toBe(
      fingerprintOf({ type: 'enum', values: [{ value: 'b' }] }),
    )
  })

  it('a json field without structure and a text field have none', () => {
    const def = (type: string, extra = {}) =>
      ({ name: 'f', type, required: false, unique: false, indexed: false, ...extra }) as FieldDef
    expect(fieldStructure(def('json'))).toBeNull()
    expect(fieldStructure(def('text'))).toBeNull()
    expect(fieldStructure(def('json', { structure: { enforcement: 'off', shape: { type: 'string' } } }))).toMatchObject(
      { kind: 'json', enforcement: 'off' },
    )
  })
})
