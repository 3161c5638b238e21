import { describe, expect, it } from 'vitest'
import type { FieldDef, FieldTypeName } from './field-def.js'
import { FieldValueError } from './field-value-error.js'
import { fieldTypeOf, fieldTypes } from './registry.js'
import { patternLimits } from './safe-pattern.js'

const def = (type: FieldTypeName, over: Partial<FieldDef> = {}): FieldDef => ({
  name: 'f',
  type,
  required: false,
  unique: false,
  indexed: false,
  ...over,
})

const ok = (stored?: unknown) => ({ ok: true as const, stored })
const invalid = { code: 'invalid_field' as const }
const rule = (name: string) => ({ code: 'validation_error' as const, rule: name })
type Expected = ReturnType<typeof ok> | typeof invalid | ReturnType<typeof rule>

const same = Symbol('same')
type Row = [label: string, field: FieldDef, input: unknown, expected: Expected | typeof same]

const enumDef = { enumValues: ['draft', 'published'] }
const belongsTo = {
  relationConfig: { targetCollection: 'people', relationType: 'belongsTo', onDelete: 'set-null' },
} as const
const hasMany = {
  relationConfig: { targetCollection: 'people', relationType: 'hasMany', onDelete: 'set-null' },
} as const
const fileId = '0123456789abcdef0123456789abcdef'
const square = [
  [
    [0, 0],
    [1, 0],
    [1, 1],
    [0, 1],
    [0, 0],
  ],
]
const deep = (levels: number): unknown => (levels === 0 ? 1 : [deep(levels - 1)])

// `same` means the value is stored as given.
const rows: Row[] = [
  ['text', def('text'), 'hello', same],
  ['text empty', def('text'), '', same],
  ['text number', def('text'), 5, invalid],
  ['text null', def('text'), null, invalid],
  ['text object', def('text'), { a: 1 }, invalid],
  ['text minLength', def('text', { validationRules: { minLength: 2 } }), 'a', rule('minLength')],
  ['text maxLength', def('text', { validationRules: { maxLength: 3 } }), 'abcd', rule('maxLength')],
  ['text maxLength counts characters', def('text', { validationRules: { maxLength: 3 } }), 'héé', same],
  ['text maxLength counts emoji once', def('text', { validationRules: { maxLength: 3 } }), '😀😀😀', same],
  ['text 4 emoji over maxLength 3', def('text', { validationRules: { maxLength: 3 } }), '😀😀😀😀', rule('maxLength')],
  ['text minLength counts emoji once', def('text', { validationRules: { minLength: 2 } }), '😀', rule('minLength')],
  ['text pattern match', def('text', { validationRules: { pattern: '^[A-Z]{3}$' } }), 'ABC', same],
  ['text pattern miss', def('text', { validationRules: { pattern: '^[A-Z]{3}$' } }), 'abc', rule('pattern')],
  ['text pattern not anchored', def('text', { validationRules: { pattern: '[0-9]' } }), 'a1b', same],
  [
    'text pattern input bounded',
    def('text', { validationRules: { pattern: '.*' } }),
    'x'.repeat(patternLimits.inputChars + 1),
    rule('pattern'),
  ],
  [
    'text pattern at the bound',
    def('text', { validationRules: { pattern: '.*' } }),
    'x'.repeat(patternLimits.inputChars),
    same,
  ],
  [
    'text hostile pattern stays fast',
    def('text', { validationRules: { pattern: '^(a+)+$' } }),
    `${'a'.repeat(patternLimits.inputChars - 1)}!`,
    rule('pattern'),
  ],
  ['translatable text', def('text', { translatable: true }), { en: 'Hi', de: 'Hallo', 'pt-BR': 'Oi' }, same],
  ['translatable text as a string', def('text', { translatable: true }), 'Hi', invalid],
  ['translatable text, a number inside', def('text', { translatable: true }), { en: 5 }, invalid],
  ['translatable text, bad locale', def('text', { translatable: true }), { 'not a locale': 'x' }, invalid],
  ['translatable text, __proto__ key', def('text', { translatable: true }), JSON.parse('{"__proto__":"x"}'), invalid],
  [
    'translatable text, rule per locale',
    def('text', { translatable: true, validationRules: { maxLength: 2 } }),
    { en: 'Hey' },
    rule('maxLength'),
  ],
  ['translatable email checks each value', def('email', { translatable: true }), { en: 'a@b.co', de: 'nope' }, invalid],
  [
    'translatable text, too many locales',
    def('text', { translatable: true }),
    Object.fromEntries(
      Array.from({ length: 101 }, (_, i) => [
        `l${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
        'x',
      ]),
    ),
    invalid,
  ],
  ['richtext', def('richtext'), '<p>Hi</p>', same],
  ['richtext array', def('richtext'), ['x'], invalid],
  ['email', def('email'), 'user.name+tag@sub.example.org', same],
  ['email no tld', def('email'), 'a@b', invalid],
  ['email space', def('email'), 'a b@c.de', invalid],
  ['email two @', def('email'), 'a@b@c.de', invalid],
  ['email too long', def('email'), `${'x'.repeat(250)}@b.co`, invalid],
  ['email maxLength', def('email', { validationRules: { maxLength: 5 } }), 'a@b.co', rule('maxLength')],
  ['url https', def('url'), 'https://example.com/a?b=1#c', same],
  ['url http with port', def('url'), 'http://localhost:3000', same],
  ['url javascript', def('url'), 'javascript:alert(1)', invalid],
  ['url relative', def('url'), 'example.com', invalid],
  ['url ftp', def('url'), 'ftp://example.org/file', invalid],
  ['url with a space', def('url'), 'https://exa mple.com', invalid],
  ['url with a trailing newline', def('url'), 'https://example.com\n', invalid],
  ['url too long', def('url'), `https://example.com/${'a'.repeat(2048)}`, invalid],
  ['phone international', def('phone'), '+44 20 7946 0958', same],
  ['phone local', def('phone'), '(555) 123-4567', same],
  ['phone too few digits', def('phone'), '12', invalid],
  ['phone words', def('phone'), 'call me', invalid],
  ['phone 16 digits', def('phone'), '+1234567890123456', invalid],
  ['phone number type', def('phone'), 5551234, invalid],
  ['slug', def('slug'), 'hello-world-2', same],
  ['slug upper case', def('slug'), 'Hello', invalid],
  ['slug double hyphen', def('slug'), 'a--b', invalid],
  ['slug leading hyphen', def('slug'), '-a', invalid],
  ['slug underscore', def('slug'), 'a_b', invalid],
  ['uuid upper case', def('uuid'), '123E4567-E89B-12D3-A456-426614174000', ok('123e4567-e89b-12d3-a456-426614174000')],
  ['uuid without hyphens', def('uuid'), '123e4567e89b12d3a456426614174000', ok('123e4567-e89b-12d3-a456-426614174000')],
  ['uuid garbage', def('uuid'), 'xyz', invalid],
  ['uuid misplaced hyphens', def('uuid'), '123e4567e-89b-12d3-a456-426614174000', invalid],
  ['uuid number', def('uuid'), 123, invalid],
  ['integer', def('integer'), 42, same],
  ['integer negative', def('integer'), -7, same],
  ['integer -0', def('integer'), -0, ok(0)],
  ['integer max safe', def('integer'), Number.MAX_SAFE_INTEGER, same],
  ['integer over max safe', def('integer'), 2 ** 53, invalid],
  ['integer fraction', def('integer'), 1.5, invalid],
  ['integer text', def('integer'), 'abc', invalid],
  ['integer numeric text', def('integer'), '42', invalid],
  ['integer NaN', def('integer'), Number.NaN, invalid],
  ['integer boolean', def('integer'), true, invalid],
  ['integer min', def('integer', { validationRules: { min: 10 } }), 5, rule('min')],
  ['integer max', def('integer', { validationRules: { max: 10 } }), 11, rule('max')],
  ['integer at max', def('integer', { validationRules: { min: 0, max: 10 } }), 10, same],
  ['decimal', def('decimal'), 19.99, same],
  ['decimal infinite', def('decimal'), Number.POSITIVE_INFINITY, invalid],
  ['decimal text', def('decimal'), '19.99', invalid],
  ['decimal max', def('decimal', { validationRules: { max: 100 } }), 100.5, rule('max')],
  ['number', def('number'), 1e-7, same],
  ['number NaN', def('number'), Number.NaN, invalid],
  ['number -Infinity', def('number'), Number.NEGATIVE_INFINITY, invalid],
  ['number min', def('number', { validationRules: { min: -1.5 } }), -2, rule('min')],
  ['boolean true', def('boolean'), true, same],
  ['boolean false', def('boolean'), false, same],
  ['boolean 1', def('boolean'), 1, invalid],
  ['boolean "true"', def('boolean'), 'true', invalid],
  ['date', def('date'), '2024-01-31', same],
  ['date leap day', def('date'), '2024-02-29', same],
  ['date leap day 2000', def('date'), '2000-02-29', same],
  ['date no leap day 2023', def('date'), '2023-02-29', invalid],
  ['date no leap day 1900', def('date'), '1900-02-29', invalid],
  ['date February 30', def('date'), '2024-02-30', invalid],
  ['date April 31', def('date'), '2024-04-31', invalid],
  ['date month 13', def('date'), '2024-13-01', invalid],
  ['date day 0', def('date'), '2024-01-00', invalid],
  ['date unpadded', def('date'), '2024-1-1', invalid],
  ['date with time', def('date'), '2024-01-01T00:00:00Z', invalid],
  ['date number', def('date'), 20240101, invalid],
  ['datetime', def('datetime'), 1_700_000_000, same],
  ['datetime epoch', def('datetime'), 0, same],
  ['datetime negative', def('datetime'), -1, invalid],
  ['datetime fraction', def('datetime'), 1.5, invalid],
  ['datetime text', def('datetime'), '1700000000', invalid],
  ['datetime ISO text', def('datetime'), '2024-01-01T00:00:00Z', invalid],
  ['datetime min', def('datetime', { validationRules: { min: 2000 } }), 1000, rule('min')],
  ['enum', def('enum', enumDef), 'draft', same],
  ['enum unknown value', def('enum', enumDef), 'archived', invalid],
  ['enum case matters', def('enum', enumDef), 'Draft', invalid],
  ['enum number', def('enum', enumDef), 1, invalid],
  ['multi_enum', def('multi_enum', enumDef), ['published', 'draft'], same],
  ['multi_enum empty', def('multi_enum', enumDef), [], same],
  ['multi_enum repeated', def('multi_enum', enumDef), ['draft', 'draft'], invalid],
  ['multi_enum unknown value', def('multi_enum', enumDef), ['draft', 'z'], invalid],
  ['multi_enum a string', def('multi_enum', enumDef), 'draft', invalid],
  ['json object', def('json'), { a: 1, b: [true, null, 'x'] }, same],
  ['json array', def('json'), [1, 2], same],
  ['json string', def('json'), 'str', same],
  ['json zero', def('json'), 0, same],
  ['json false', def('json'), false, same],
  ['json function', def('json'), { f: () => 1 }, invalid],
  ['json undefined inside', def('json'), { a: undefined }, invalid],
  ['json Date', def('json'), new Date(0), invalid],
  ['json NaN inside', def('json'), { n: Number.NaN }, invalid],
  ['json 64 levels', def('json'), deep(64), same],
  ['json 70 levels', def('json'), deep(70), invalid],
  ['relation belongsTo', def('relation', belongsTo), 'abc123', same],
  ['relation belongsTo system id', def('relation', belongsTo), fileId, same],
  ['relation belongsTo number', def('relation', belongsTo), 5, invalid],
  ['relation belongsTo space', def('relation', belongsTo), 'has space', invalid],
  ['relation belongsTo a list', def('relation', belongsTo), ['a'], invalid],
  ['relation hasMany', def('relation', hasMany), ['a', 'b'], same],
  ['relation hasMany empty', def('relation', hasMany), [], same],
  ['relation hasMany a string', def('relation', hasMany), 'a', invalid],
  ['relation hasMany repeated', def('relation', hasMany), ['a', 'a'], invalid],
  ['relation hasMany numbers', def('relation', hasMany), [1], invalid],
  ['relation hasMany too many', def('relation', hasMany), Array.from({ length: 1001 }, (_, i) => `r${i}`), invalid],
  ['file', def('file'), fileId, same],
  ['file upper case', def('file'), fileId.toUpperCase(), invalid],
  ['file short', def('file'), 'abc', invalid],
  ['geo point', def('geo'), { type: 'Point', coordinates: [10, 20] }, same],
  ['geo point with altitude', def('geo'), { type: 'Point', coordinates: [10, 20, 300] }, same],
  ['geo point at the edges', def('geo'), { type: 'Point', coordinates: [-180, 90] }, same],
  ['geo point longitude 200', def('geo'), { type: 'Point', coordinates: [200, 0] }, invalid],
  ['geo point latitude 91', def('geo'), { type: 'Point', coordinates: [0, 91] }, invalid],
  ['geo point text coordinate', def('geo'), { type: 'Point', coordinates: ['1', 2] }, invalid],
  ['geo point one number', def('geo'), { type: 'Point', coordinates: [1] }, invalid],
  ['geo point four numbers', def('geo'), { type: 'Point', coordinates: [0, 0, 0, 0] }, invalid],
  ['geo point NaN', def('geo'), { type: 'Point', coordinates: [Number.NaN, 0] }, invalid],
  ['geo point missing coordinates', def('geo'), { type: 'Point' }, invalid],
  [
    'geo multipoint',
    def('geo'),
    {
      type: 'MultiPoint',
      coordinates: [
        [0, 0],
        [1, 1],
      ],
    },
    same,
  ],
  ['geo multipoint empty', def('geo'), { type: 'MultiPoint', coordinates: [] }, same],
  [
    'geo linestring',
    def('geo'),
    {
      type: 'LineString',
      coordinates: [
        [0, 0],
        [1, 1],
      ],
    },
    same,
  ],
  ['geo linestring one position', def('geo'), { type: 'LineString', coordinates: [[0, 0]] }, invalid],
  [
    'geo multilinestring',
    def('geo'),
    {
      type: 'MultiLineString',
      coordinates: [
        [
          [0, 0],
          [1, 1],
        ],
        [
          [2, 2],
          [3, 3],
        ],
      ],
    },
    same,
  ],
  ['geo multilinestring bad line', def('geo'), { type: 'MultiLineString', coordinates: [[[0, 0]]] }, invalid],
  ['geo polygon', def('geo'), { type: 'Polygon', coordinates: square }, same],
  [
    'geo polygon with a hole',
    def('geo'),
    {
      type: 'Polygon',
      coordinates: [
        ...square,
        [
          [0.2, 0.2],
          [0.4, 0.2],
          [0.4, 0.4],
          [0.2, 0.2],
        ],
      ],
    },
    same,
  ],
  [
    'geo polygon not closed',
    def('geo'),
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
    invalid,
  ],
  [
    'geo polygon ring of 3',
    def('geo'),
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 0],
          [0, 0],
        ],
      ],
    },
    invalid,
  ],
  ['geo polygon no rings', def('geo'), { type: 'Polygon', coordinates: [] }, invalid],
  [
    'geo polygon latitude out of range',
    def('geo'),
    {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 95],
          [1, 1],
          [0, 0],
        ],
      ],
    },
    invalid,
  ],
  ['geo multipolygon', def('geo'), { type: 'MultiPolygon', coordinates: [square, square] }, same],
  [
    'geo multipolygon unclosed',
    def('geo'),
    {
      type: 'MultiPolygon',
      coordinates: [
        square,
        [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      ],
    },
    invalid,
  ],
  [
    'geo collection',
    def('geo'),
    {
      type: 'GeometryCollection',
      geometries: [
        { type: 'Point', coordinates: [0, 0] },
        {
          type: 'LineString',
          coordinates: [
            [0, 0],
            [1, 1],
          ],
        },
      ],
    },
    same,
  ],
  [
    'geo collection nested',
    def('geo'),
    { type: 'GeometryCollection', geometries: [{ type: 'GeometryCollection', geometries: [] }] },
    invalid,
  ],
  [
    'geo collection bad member',
    def('geo'),
    { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [0, 100] }] },
    invalid,
  ],
  [
    'geo feature',
    def('geo'),
    { type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] }, properties: {} },
    invalid,
  ],
  ['geo text', def('geo'), 'POINT(0 0)', invalid],
  [
    'geo too many positions',
    def('geo'),
    { type: 'MultiPoint', coordinates: Array.from({ length: 100_001 }, () => [0, 0]) },
    invalid,
  ],
  ['lookup', def('lookup', { resultType: 'text' }), 'x', invalid],
  ['rollup', def('rollup', { resultType: 'integer' }), 3, invalid],
]

describe('write', () => {
  it.each(rows)('%s', (_label, field, input, expected) => {
    const type = fieldTypeOf(field.type)
    if (expected === same || 'ok' in expected) {
      const stored = type.write(input, field)
      expect(stored).toEqual(expected === same ? input : expected.stored)
      return
    }
    let caught: unknown
    try {
      type.write(input, field)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(FieldValueError)
    const error = caught as FieldValueError
    expect(error.code).toBe(expected.code)
    expect(error.status).toBe(expected.code === 'invalid_field' ? 400 : 422)
    expect(error.details.field).toBe('f')
    if ('rule' in expected) expect(error.details.rule).toBe(expected.rule)
  })

  it('covers every type', () => {
    const covered = new Set(rows.map(([, field]) => field.type))
    expect(fieldTypes.filter((t) => !covered.has(t.type)).map((t) => t.type)).toEqual([])
  })

  it('never echoes more than ~60 characters of a refused value', () => {
    const long = `${'<script>'.repeat(2000)}`
    for (const [type, extra] of [
      ['integer', {}],
      ['email', {}],
      ['enum', enumDef],
      ['text', { validationRules: { maxLength: 3 } }],
    ] as const) {
      const field = def(type, extra)
      try {
        fieldTypeOf(type).write(long, field)
        expect.unreachable()
      } catch (err) {
        const message = (err as Error).message
        expect(message.length).toBeLessThan(200)
        expect(message).not.toContain('<script>'.repeat(10))
      }
    }
  })

  it('returns the value it stores without keeping a reference to a changed list', () => {
    const input = ['draft']
    const stored = fieldTypeOf('multi_enum').write(input, def('multi_enum', enumDef))
    expect(stored).toEqual(['draft'])
    expect(stored).not.toBe(input)
  })
})
