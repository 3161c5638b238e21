import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { compareList, compareValue, literal, matchNone, type FilterNode } from './ast.js'
import { checkFilter } from './check-filter.js'
import { createSchemaResolver, type FieldResolver } from './field-resolver.js'
import { isCalendarDate } from './field-values.js'
import { filterContext } from './filter-cases.js'
import { parseFilter } from './parse.js'
import { resolveVariables } from './variables.js'

// The schema check between the parser and SQL or memory: values held to the kind of their field, and
// comma-separated lists converted to it. (The shared filter cases also run through it, in both runners.)

const schema = createSchemaResolver({
  title: 'text',
  views: 'integer',
  ratio: 'number',
  published: 'boolean',
  meta: 'json',
  created_at: 'integer',
  pubdate: { type: 'text', values: { kind: 'string', format: 'date' } },
  status: { type: 'text', values: { kind: 'string', choices: ['draft', 'published'] } },
  label: { type: 'json', values: { kind: 'string' } },
})

const check = (filter: unknown, resolver: FieldResolver = schema) => checkFilter(parseFilter(filter), resolver)

const failure = (fn: () => unknown): { code: string; message: string } => {
  try {
    fn()
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, message: err.message }
    return { code: `not an AppError: ${String(err)}`, message: '' }
  }
  return { code: 'no error', message: '' }
}

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen))

describe('checkFilter: values the field can hold are accepted, the tree unchanged', () => {
  const rows: { name: string; filter: unknown }[] = [
    { name: 'text', filter: { title: 'a', _or: [{ title: { _contains: 'x' } }, { title: { _gt: 'b' } }] } },
    { name: 'a whole number for an integer', filter: { views: 5 } },
    { name: 'a fraction ordered against an integer', filter: { views: { _gt: 1.5 } } },
    { name: 'a number for a number', filter: { ratio: { _lte: 2 } } },
    { name: 'true or false', filter: { published: { _in: [true, false] } } },
    { name: 'booleans ordered', filter: { published: { _gt: false } } },
    { name: 'a date', filter: { pubdate: { _gte: '2024-02-29' } } },
    {
      name: 'a date between dates (array)',
      filter: [{ field: 'pubdate', op: 'between', value: '2024-01-01', valueTo: '$NOW_DATE' }],
    },
    { name: 'any text for a text operator on a date', filter: { pubdate: { _starts_with: '2024-' } } },
    { name: 'a choice', filter: { status: { _in: ['draft', 'published'] } } },
    { name: 'any text ordered against an enum', filter: { status: { _lt: 'm' } } },
    { name: 'any text for a text operator on an enum', filter: { status: { _ncontains: 'zzz' } } },
    { name: 'a variable for an enum (its value is not known yet)', filter: { status: '$CURRENT_ROLE' } },
    { name: 'text for declared text kept in JSON', filter: { label: { _ends_with: 'x' } } },
    {
      name: 'anything for a JSON column',
      filter: { meta: { _contains: 1 }, _or: [{ meta: 'x' }, { meta: { _gt: true } }] },
    },
    {
      name: 'anything for a path into JSON',
      filter: { 'meta.n': '1', 'meta.s': { _gt: 5 }, 'meta.b': { _contains: true } },
    },
    {
      name: 'null for any field',
      filter: { views: null, published: { _neq: null }, pubdate: { _gt: null }, status: { _in: [null] } },
    },
    { name: 'null for a text operator', filter: { title: { _contains: null } } },
    {
      name: 'presence operators on any field',
      filter: [
        { field: 'views', op: 'empty' },
        { field: 'published', op: 'not_empty' },
      ],
    },
    { name: '_null on a number', filter: { views: { _null: true, _nnull: true } } },
    { name: '$NOW for Unix seconds', filter: { created_at: { _lt: '$NOW' } } },
    { name: '$CURRENT_USER for text', filter: { title: '$CURRENT_USER' } },
    { name: 'the empty filter', filter: {} },
  ]
  it.each(rows)('$name', ({ filter }) => {
    const parsed = parseFilter(filter)
    expect(checkFilter(parsed, schema)).toBe(parsed)
  })

  it('a tree already resolved is checked the same way', () => {
    const resolved = resolveVariables(parseFilter({ created_at: { _lt: '$NOW' }, pubdate: '$NOW_DATE' }), filterContext)
    expect(checkFilter(resolved, schema)).toBe(resolved)
    expect(
      failure(() => checkFilter(resolveVariables(parseFilter({ pubdate: '$NOW' }), filterContext), schema)).code,
    ).toBe('invalid_request')
  })

  it('an empty OR (a grant that reaches nothing) stays as it is', () => {
    const none = matchNone()
    expect(checkFilter(none, schema)).toBe(none)
  })
})

describe('checkFilter: a comma-separated in list takes the kind of its field', () => {
  const split = (field: string, value: string) => [{ field, op: 'in', value }]
  const rows: { name: string; filter: unknown; values: unknown[] }[] = [
    { name: 'integers', filter: split('views', '0,10'), values: [0, 10] },
    { name: 'signed integers and exponents', filter: split('views', '-3,+4,1e3,2.0'), values: [-3, 4, 1000, 2] },
    { name: 'numbers', filter: split('ratio', '0.5,1,.25,-2.5e-1'), values: [0.5, 1, 0.25, -0.25] },
    { name: 'booleans', filter: split('published', 'true,false'), values: [true, false] },
    { name: 'text stays text', filter: split('title', '1,true,,x'), values: ['1', 'true', '', 'x'] },
    {
      name: 'dates stay text',
      filter: split('pubdate', '2024-01-01,2024-12-31'),
      values: ['2024-01-01', '2024-12-31'],
    },
    { name: 'choices stay text', filter: split('status', 'draft'), values: ['draft'] },
    { name: 'a JSON path stays text', filter: split('meta.n', '1,2'), values: ['1', '2'] },
  ]
  it.each(rows)('$name', ({ filter, values }) => {
    const checked = check(filter)
    expect(checked).toEqual({
      kind: 'compare',
      field: (filter as { field: string }[])[0]!.field.split('.'),
      op: 'in',
      values: values.map((value) => ({ kind: 'literal', value })),
    })
    expect(checked).not.toHaveProperty('split')
    expect(isDeepFrozen(checked)).toBe(true)
  })

  it('a variable in the list is kept and held to its kind', () => {
    expect(check(split('created_at', '5,$NOW'))).toEqual(
      compareList(['created_at'], 'in', [literal(5), { kind: 'variable', name: '$NOW' }]),
    )
    expect(failure(() => check(split('views', '5,$CURRENT_USER'))).code).toBe('invalid_request')
  })

  it('a list written as an array is not converted: its values must already be of the kind', () => {
    expect(failure(() => check([{ field: 'views', op: 'in', value: ['0', '10'] }])).code).toBe('invalid_request')
    expect(check([{ field: 'views', op: 'in', value: [0, 10] }])).toEqual(
      compareList(['views'], 'in', [literal(0), literal(10)]),
    )
  })

  it('an unchecked node marked split converts the same way when built by hand', () => {
    const node = compareList(['published'], 'in', [literal('true')], true)
    expect(checkFilter(node, schema)).toEqual(compareList(['published'], 'in', [literal(true)]))
  })
})

describe('checkFilter: what it refuses (400 invalid_request naming the field)', () => {
  const rows: { name: string; filter: unknown; says: string }[] = [
    // Comma-separated items that do not convert
    {
      name: 'a word among integers',
      filter: [{ field: 'views', op: 'in', value: '0,abc' }],
      says: 'filter.views: in takes whole numbers here, and "abc"',
    },
    { name: 'a fraction among integers', filter: [{ field: 'views', op: 'in', value: '1.5' }], says: 'filter.views' },
    {
      name: 'an integer past 2^53',
      filter: [{ field: 'views', op: 'in', value: '9007199254740993' }],
      says: 'filter.views',
    },
    {
      name: 'hexadecimal',
      filter: [{ field: 'ratio', op: 'in', value: '0x10' }],
      says: 'filter.ratio: in takes numbers here',
    },
    {
      name: 'an empty item among numbers',
      filter: [{ field: 'ratio', op: 'in', value: '1,,2' }],
      says: 'filter.ratio',
    },
    { name: 'Infinity', filter: [{ field: 'ratio', op: 'in', value: 'Infinity' }], says: 'filter.ratio' },
    {
      name: 'a number too large to be finite',
      filter: [{ field: 'ratio', op: 'in', value: '1e999' }],
      says: 'filter.ratio',
    },
    { name: 'a space inside a number', filter: [{ field: 'ratio', op: 'in', value: '1 2' }], says: 'filter.ratio' },
    {
      name: 'yes for a boolean',
      filter: [{ field: 'published', op: 'in', value: 'yes' }],
      says: 'filter.published: in takes true or false here, and "yes" is neither',
    },
    { name: 'TRUE for a boolean', filter: [{ field: 'published', op: 'in', value: 'TRUE' }], says: 'filter.published' },
    {
      name: 'not a date',
      filter: [{ field: 'pubdate', op: 'in', value: '2024-01-01,2024-13-01' }],
      says: 'filter.pubdate: in takes a date as YYYY-MM-DD here, not "2024-13-01"',
    },
    {
      name: 'not a choice',
      filter: [{ field: 'status', op: 'in', value: 'draft,gone' }],
      says: 'filter.status: "gone" is not one of the field\'s choices',
    },
    // Values of the wrong kind
    {
      name: 'a boolean ordered against a number',
      filter: { views: { _gt: true } },
      says: 'filter.views: gt takes a number here, not true',
    },
    { name: 'text for a number', filter: { views: 'abc' }, says: 'filter.views: eq takes a number here, not "abc"' },
    {
      name: 'a numeral as text',
      filter: { ratio: { _in: [1, '2'] } },
      says: 'filter.ratio: in takes a number here, not "2"',
    },
    { name: 'text for a boolean', filter: { published: 'yes' }, says: 'filter.published: eq takes true or false here' },
    { name: 'a number for a boolean', filter: { published: { _neq: 0 } }, says: 'filter.published' },
    { name: 'a number for text', filter: { title: 5 }, says: 'filter.title: eq takes text here, not 5' },
    { name: 'a boolean for text', filter: { title: { _nin: [true] } }, says: 'filter.title' },
    {
      name: 'a number for a date',
      filter: { pubdate: { _gt: 5 } },
      says: 'filter.pubdate: gt takes a date as YYYY-MM-DD here, not 5',
    },
    { name: 'a date in another shape', filter: { pubdate: '2024-1-1' }, says: 'filter.pubdate' },
    { name: 'a date that is not on the calendar', filter: { pubdate: '2023-02-29' }, says: 'filter.pubdate' },
    { name: 'a date with a time', filter: { pubdate: { _lt: '2024-01-01T00:00:00Z' } }, says: 'filter.pubdate' },
    {
      name: '$NOW for a date',
      filter: { pubdate: { _lte: '$NOW' } },
      says: 'filter.pubdate: lte takes a date as YYYY-MM-DD here, not $NOW',
    },
    { name: '$CURRENT_USER for a date', filter: { pubdate: '$CURRENT_USER' }, says: 'filter.pubdate' },
    {
      name: 'a value outside the choices',
      filter: { status: 'notanenum' },
      says: 'filter.status: "notanenum" is not one of the field\'s choices',
    },
    { name: 'a value outside the choices under neq', filter: { status: { _neq: 'Draft' } }, says: 'filter.status' },
    { name: 'a number for an enum', filter: { status: { _gt: 1 } }, says: 'filter.status' },
    {
      name: 'a text operator on a number',
      filter: { views: { _contains: '1' } },
      says: 'filter.views: contains compares text, and this is a number field',
    },
    {
      name: 'a text operator on a boolean',
      filter: { published: { _nends_with: 'e' } },
      says: 'filter.published: nends_with compares text, and this is a boolean field',
    },
    { name: 'a text operator with null on a number', filter: { views: { _starts_with: null } }, says: 'filter.views' },
    {
      name: 'a number for a text operator',
      filter: { title: { _contains: 1 } },
      says: 'filter.title: contains takes text here, not 1',
    },
    {
      name: 'a word for Unix seconds',
      filter: { created_at: { _gt: 'yesterday' } },
      says: 'filter.created_at: gt takes a number here, not "yesterday"',
    },
    {
      name: '$NOW_DATE for Unix seconds',
      filter: { created_at: { _gt: '$NOW_DATE' } },
      says: 'filter.created_at: gt takes a number here, not $NOW_DATE',
    },
    { name: '$NOW for text', filter: { title: { _eq: '$NOW' } }, says: 'filter.title' },
    { name: 'a number for declared text kept in JSON', filter: { label: 5 }, says: 'filter.label' },
    {
      name: 'a wrong value deep inside _or',
      filter: { _or: [{ title: 'a' }, { _and: [{ views: 'x' }] }] },
      says: 'filter.views',
    },
    {
      name: 'array format: text ordered against a number',
      filter: [{ field: 'views', op: 'gt', value: 'abc' }],
      says: 'filter.views',
    },
    {
      name: 'array format: a between bound of the wrong kind',
      filter: [{ field: 'views', op: 'between', value: 1, valueTo: 'z' }],
      says: 'filter.views: between takes a number here, not "z"',
    },
    {
      name: 'array format: text operator on a number',
      filter: [{ field: 'views', op: 'ends_with', value: '0' }],
      says: 'filter.views',
    },
    // Fields the resolver refuses
    { name: 'an unknown field', filter: { nope: 1 }, says: 'unknown field "nope"' },
    { name: 'a path into a text field', filter: { 'title.x': 'a' }, says: '"title" is not a JSON field' },
  ]
  it.each(rows)('$name', ({ filter, says }) => {
    const { code, message } = failure(() => check(filter))
    expect(code).toBe('invalid_request')
    expect(message).toContain(says)
  })

  it('echoes at most 40 characters of a value', () => {
    const { message } = failure(() => check({ views: 'x'.repeat(4000) }))
    expect(message.length).toBeLessThan(120)
  })

  it('passes on what the resolver throws (a field outside an allowlist is forbidden)', () => {
    const allowlisted: FieldResolver = {
      resolve(path) {
        if (path[0] !== 'title') throw new AppError('forbidden', `You may not filter or sort on ${path[0]}`)
        return schema.resolve(path)
      },
    }
    expect(failure(() => check({ title: 'a', views: 1 }, allowlisted)).code).toBe('forbidden')
  })
})

describe('checkFilter: malformed input from code, not from callers', () => {
  it('a malformed tree is internal', () => {
    expect(failure(() => checkFilter({ kind: 'xor' } as unknown as FilterNode, schema)).code).toBe('internal')
    const badOperand = {
      kind: 'compare',
      field: ['title'],
      op: 'eq',
      value: { kind: 'weird' },
    } as unknown as FilterNode
    expect(failure(() => checkFilter(badOperand, schema)).code).toBe('internal')
    const badLiteral = compareValue(['title'], 'eq', { kind: 'literal', value: {} as unknown as string })
    expect(failure(() => checkFilter(badLiteral, schema)).code).toBe('internal')
  })

  it('values a resolver declares badly are internal', () => {
    const bad: FieldResolver = {
      resolve: () => ({ column: 'title', jsonPath: [], type: 'text', values: { kind: 'date' } as never }),
    }
    expect(failure(() => check({ title: 'a' }, bad)).code).toBe('internal')
  })
})

describe('isCalendarDate', () => {
  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['1900-02-29', false],
    ['2000-02-29', true],
    ['2024-04-31', false],
    ['2024-12-31', true],
    ['2024-00-10', false],
    ['2024-01-00', false],
    ['24-01-01', false],
    ['2024-01-01 ', false],
    ['2024-1-01', false],
  ])('%s → %s', (text, valid) => {
    expect(isCalendarDate(text)).toBe(valid)
  })
})
