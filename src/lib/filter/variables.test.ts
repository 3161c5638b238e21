import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { parseFilter } from './parse.js'
import { resolveVariables, variableValue, variableValues, type VariableContext } from './variables.js'
import { variableNames, type Scalar, type VariableName } from './ast.js'
import { isCalendarDate } from './field-values.js'

const context: VariableContext = { userId: 'u1', role: 'editor', projectId: 'p1', now: 1_700_000_000 }

const isDeepFrozen = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen))

describe('variableValue', () => {
  const rows: { name: VariableName; context: VariableContext; value: Scalar }[] = [
    { name: '$CURRENT_USER', context, value: 'u1' },
    { name: '$CURRENT_USER', context: { ...context, userId: null }, value: null },
    { name: '$CURRENT_ROLE', context, value: 'editor' },
    { name: '$PROJECT_ID', context, value: 'p1' },
    { name: '$NOW', context, value: 1_700_000_000 },
    { name: '$NOW', context: { ...context, now: 1_700_000_000.9 }, value: 1_700_000_000 },
    { name: '$NOW_DATE', context, value: '2023-11-14' },
    { name: '$NOW_DATE', context: { ...context, now: 1_700_006_399 }, value: '2023-11-14' },
    { name: '$NOW_DATE', context: { ...context, now: 1_700_006_400 }, value: '2023-11-15' },
    { name: '$NOW_DATE', context: { ...context, now: 0 }, value: '1970-01-01' },
  ]
  it.each(rows)('$name at $context.now as $context.userId → $value', ({ name, context: ctx, value }) => {
    expect(variableValue(name, ctx)).toBe(value)
  })
})

describe('variableValues', () => {
  // The schema check holds a variable to these before its value is known: they must say what it becomes.
  it.each(variableNames.map((name) => [name]))('%s resolves to what it declares (or null)', (name) => {
    const declared = variableValues[name]
    for (const ctx of [context, { ...context, userId: null, now: 0 }, { ...context, now: 4_102_444_800.5 }]) {
      const value = variableValue(name, ctx)
      if (value === null) continue
      expect(typeof value).toBe(declared.kind)
      if (declared.kind === 'number' && declared.integer) expect(Number.isSafeInteger(value)).toBe(true)
      if (declared.kind === 'string' && declared.format === 'date') expect(isCalendarDate(String(value))).toBe(true)
    }
  })
})

describe('resolveVariables', () => {
  it('replaces every variable, everywhere, with a literal', () => {
    const parsed = parseFilter({
      _or: [
        { owner: '$CURRENT_USER', audience: { _in: ['$CURRENT_ROLE', 'x'] } },
        {
          _and: [
            { project: { _neq: '$PROJECT_ID' } },
            { day: { _starts_with: '$NOW_DATE' } },
            { note: { _null: true } },
          ],
        },
      ],
    })
    expect(resolveVariables(parsed, context)).toEqual({
      kind: 'or',
      items: [
        {
          kind: 'and',
          items: [
            { kind: 'compare', field: ['owner'], op: 'eq', value: { kind: 'literal', value: 'u1' } },
            {
              kind: 'compare',
              field: ['audience'],
              op: 'in',
              values: [
                { kind: 'literal', value: 'editor' },
                { kind: 'literal', value: 'x' },
              ],
            },
          ],
        },
        {
          kind: 'and',
          items: [
            { kind: 'compare', field: ['project'], op: 'neq', value: { kind: 'literal', value: 'p1' } },
            { kind: 'compare', field: ['day'], op: 'starts_with', value: { kind: 'literal', value: '2023-11-14' } },
            { kind: 'compare', field: ['note'], op: 'is_null' },
          ],
        },
      ],
    })
  })

  it('resolves between bounds', () => {
    const parsed = parseFilter([{ field: 'created_at', op: 'between', value: '$NOW', valueTo: '$NOW' }])
    expect(resolveVariables(parsed, context)).toMatchObject({
      from: { kind: 'literal', value: 1_700_000_000 },
      to: { kind: 'literal', value: 1_700_000_000 },
    })
  })

  it('returns a new frozen tree and leaves the parsed one as it was', () => {
    const parsed = parseFilter({ owner: '$CURRENT_USER', age: { _gt: 1 } })
    const before = structuredClone(parsed)
    const resolved = resolveVariables(parsed, context)
    expect(resolved).not.toBe(parsed)
    expect(isDeepFrozen(resolved)).toBe(true)
    expect(parsed).toEqual(before)
  })

  it('keeps the mark of a comma-separated list, for a schema check that comes after', () => {
    const parsed = parseFilter([{ field: 'owner', op: 'in', value: 'u2,$CURRENT_USER' }])
    expect(resolveVariables(parsed, context)).toEqual({
      kind: 'compare',
      field: ['owner'],
      op: 'in',
      values: [
        { kind: 'literal', value: 'u2' },
        { kind: 'literal', value: 'u1' },
      ],
      split: true,
    })
  })

  it('gives an anonymous caller null for $CURRENT_USER', () => {
    expect(resolveVariables(parseFilter({ owner: '$CURRENT_USER' }), { ...context, userId: null })).toMatchObject({
      value: { kind: 'literal', value: null },
    })
  })

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 1e20])('refuses a clock reading of %s as internal', (now) => {
    expect(() => resolveVariables(parseFilter({}), { ...context, now })).toThrow(AppError)
    try {
      resolveVariables(parseFilter({}), { ...context, now })
    } catch (err) {
      expect((err as AppError).code).toBe('internal')
    }
  })
})
