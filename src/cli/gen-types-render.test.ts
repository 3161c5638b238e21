import { describe, expect, it } from 'vitest'
import { parseExpiry } from './keys.js'
import {
  expandType,
  shapeType,
  valueType,
  type MapContext,
  type WireCollection,
  type WireField,
} from './gen-types-fields.js'
import { interfaceNames, pascalName, renderTypes } from './gen-types-render.js'

/**
 * The pure parts of `plinth types` (and `keys create --expires`) as tables. That the output compiles and
 * that the API's real answers satisfy it is test/api/cli-types.test.ts.
 */

const teams: WireCollection = {
  name: 'teams',
  fields: [
    { name: 'name', type: 'text', required: true },
    { name: 'tier', type: 'enum', required: false, enumValues: ['gold', 'tin'] },
  ],
}
const tasks: WireCollection = {
  name: 'tasks',
  fields: [
    { name: 'team', type: 'relation', relationConfig: { targetCollection: 'teams', relationType: 'belongsTo' } },
  ],
}
const ctx: MapContext = {
  collections: new Map([
    ['teams', teams],
    ['tasks', tasks],
  ]),
  interfaceOf: (name) => (name === 'teams' ? 'Teams' : undefined),
}

describe('valueType', () => {
  const rows: [string, WireField, string][] = [
    ['text', { name: 'a', type: 'text', required: true }, 'string'],
    ['optional text', { name: 'a', type: 'text' }, 'string | null'],
    ['translatable text', { name: 'a', type: 'text', translatable: true }, 'string | null'],
    ['richtext, email, url, phone, slug, uuid', { name: 'a', type: 'slug', required: true }, 'string'],
    ['integer', { name: 'a', type: 'integer', required: true }, 'number'],
    ['decimal', { name: 'a', type: 'decimal' }, 'number | null'],
    ['boolean', { name: 'a', type: 'boolean', required: true }, 'boolean'],
    ['date', { name: 'a', type: 'date', required: true }, 'string'],
    ['datetime', { name: 'a', type: 'datetime', required: true }, 'number'],
    ['enum', { name: 'a', type: 'enum', required: true, enumValues: ['x', 'y"z'] }, '"x" | "y\\"z"'],
    ['enum without values', { name: 'a', type: 'enum', required: true, enumValues: [] }, 'never'],
    ['multi_enum', { name: 'a', type: 'multi_enum', enumValues: ['x'] }, 'Array<"x"> | null'],
    ['json', { name: 'a', type: 'json' }, 'PlinthJsonValue | null'],
    [
      'json, warn structure',
      { name: 'a', type: 'json', required: true, structure: { enforcement: 'warn', shape: { type: 'number' } } },
      'PlinthJsonValue',
    ],
    [
      'json, strict structure',
      { name: 'a', type: 'json', required: true, structure: { enforcement: 'strict', shape: { type: 'number' } } },
      'number',
    ],
    ['belongsTo', tasks.fields[0]!, 'string | null'],
    [
      'hasMany',
      {
        name: 'a',
        type: 'relation',
        required: true,
        relationConfig: { targetCollection: 'teams', relationType: 'hasMany' },
      },
      'string[]',
    ],
    ['file', { name: 'a', type: 'file' }, 'string | null'],
    ['geo', { name: 'a', type: 'geo', required: true }, 'PlinthGeometry'],
    [
      'lookup of an enum reads the target field',
      { name: 'a', type: 'lookup', lookupConfig: { relationField: 'team', targetField: 'tier' }, resultType: 'enum' },
      '"gold" | "tin" | null',
    ],
    [
      'lookup of a target not in the schema falls back to resultType',
      { name: 'a', type: 'lookup', lookupConfig: { relationField: 'nope', targetField: 'x' }, resultType: 'datetime' },
      'number | null',
    ],
    [
      'rollup count, even when required',
      { name: 'a', type: 'rollup', required: true, rollupConfig: { relationField: 'r', function: 'count' } },
      'number | null',
    ],
    [
      'rollup max of dates',
      {
        name: 'a',
        type: 'rollup',
        rollupConfig: { relationField: 'r', function: 'max', targetField: 'd' },
        resultType: 'date',
      },
      'string | null',
    ],
    ['a type this CLI does not know', { name: 'a', type: 'hologram', required: true }, 'unknown'],
  ]
  for (const [name, field, type] of rows) {
    it(name, () => expect(valueType(field, tasks, ctx)).toBe(type))
  }
})

describe('shapeType', () => {
  const rows: [string, unknown, string][] = [
    ['string', { type: 'string' }, 'string'],
    ['enum of normalised values', { type: 'enum', values: [{ value: 'a' }, { value: 'b' }] }, '"a" | "b"'],
    ['list', { type: 'list', items: { type: 'boolean' } }, 'Array<boolean>'],
    [
      'map',
      { type: 'map', keys: { type: 'enum', values: ['k'] }, values: { type: 'number' } },
      'Partial<Record<"k", number>>',
    ],
    [
      'object: entries optional and nullable, quoted when not identifiers',
      { type: 'object', entries: { a: { type: 'number' }, 'b-c': { type: 'string' } }, additional: false },
      '{ a?: number | null; "b-c"?: string | null }',
    ],
    [
      'object with additional keys',
      { type: 'object', entries: {}, additional: true },
      '{ [key: string]: PlinthJsonValue | undefined }',
    ],
    ['unknown node', { type: 'tensor' }, 'PlinthJsonValue'],
  ]
  for (const [name, shape, type] of rows) {
    it(name, () => expect(shapeType(shape)).toBe(type))
  }
})

describe('expandType', () => {
  const rel = (target: string, kind: string): WireField => ({
    name: 'r',
    type: 'relation',
    relationConfig: { targetCollection: target, relationType: kind },
  })
  const rows: [string, WireField, string | undefined][] = [
    ['belongsTo a generated collection', rel('teams', 'belongsTo'), 'Teams | null'],
    ['hasMany', rel('teams', 'hasMany'), 'Array<Teams>'],
    ['a collection left out', rel('other', 'belongsTo'), 'PlinthAnyRecord | null'],
    [
      'users: a profile, or the id for a caller who may not see profiles',
      rel('users', 'belongsTo'),
      'PlinthUserProfile | string | null',
    ],
    ['not a relation', { name: 'x', type: 'text' }, undefined],
  ]
  for (const [name, field, type] of rows) {
    it(name, () => expect(expandType(field, ctx)).toBe(type))
  }
})

describe('names', () => {
  it('PascalCase of the name, not singularised', () => {
    expect(['tickets', 'help_desk_items', 'a1_b', 'news'].map(pascalName)).toEqual([
      'Tickets',
      'HelpDeskItems',
      'A1B',
      'News',
    ])
  })

  it('reserved and global names get Record; remaining clashes a number; expand names never take a record name', () => {
    const names = interfaceNames(['record', 'collections', 'string', 'a_b', 'ab_', 'teams', 'teams_expand'])
    expect(Object.fromEntries(names)).toEqual({
      record: { record: 'RecordRecord', expand: 'RecordRecordExpand' },
      collections: { record: 'CollectionsRecord', expand: 'CollectionsRecordExpand' },
      string: { record: 'StringRecord', expand: 'StringRecordExpand' },
      a_b: { record: 'AB', expand: 'ABExpand' },
      ab_: { record: 'Ab', expand: 'AbExpand' },
      teams: { record: 'Teams', expand: 'TeamsExpand2' },
      teams_expand: { record: 'TeamsExpand', expand: 'TeamsExpandExpand' },
    })
  })

  it('the output is sorted by collection and holds no timestamp: the same schema gives the same file', () => {
    const once = renderTypes([tasks, teams], [tasks, teams], { source: 'http://127.0.0.1:8090' })
    expect(renderTypes([teams, tasks], [teams, tasks], { source: 'http://127.0.0.1:8090' })).toBe(once)
    expect(once.indexOf('export interface Tasks ')).toBeLessThan(once.indexOf('export interface Teams '))
    expect(once).toContain('export interface Collections {\n  tasks: Tasks\n  teams: Teams\n}')
  })
})

describe('parseExpiry', () => {
  const now = 1_800_000_000
  const rows: [string, number][] = [
    ['90m', now + 5400],
    ['12h', now + 43_200],
    ['30d', now + 2_592_000],
    ['2w', now + 1_209_600],
    ['1900000000', 1_900_000_000],
    ['2027-01-31', Date.UTC(2027, 0, 31) / 1000],
    ['2027-01-31T12:00:00', Date.UTC(2027, 0, 31, 12) / 1000],
    ['2027-01-31T12:00:00+02:00', Date.UTC(2027, 0, 31, 10) / 1000],
  ]
  for (const [input, seconds] of rows) {
    it(input, () => expect(parseExpiry(input, now)).toBe(seconds))
  }
  for (const bad of ['soon', '30', '-1d', '2027-13-45', '']) {
    it(`refuses "${bad}"`, () => expect(() => parseExpiry(bad, now)).toThrow('--expires takes'))
  }
})
