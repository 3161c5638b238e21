import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'
import { isRecord } from '../config-paths.js'
import { parseItemPath, readItemPath, type ItemPath } from '../item-path.js'
import { evaluateRule, parseRule, templateRoots, type RuleNode } from '../rules.js'
import { numeric, requiredValue } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/** The longest list a transform works on. */
export const maxTransformItems = 100_000
/** The roots a filter rule may read: the item and its index besides the run's own. */
const filterRoots = [...templateRoots, '$item', '$index']

/** A path option (`customer.name`), checked when saved. */
const path = z
  .string()
  .max(500)
  .superRefine((value, ctx) => {
    const parsed = parseItemPath(value)
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed })
  })
const fieldList = z.array(z.string().min(1).max(200)).min(1).max(200)

/** A filter's rule tree over `$item` and `$index`: checked on save, evaluated per item (no `{{= }}`: JSONata is not run per item). */
const itemRules = z.unknown().superRefine((tree, ctx) => {
  if (tree === undefined) return void ctx.addIssue({ code: 'custom', message: 'Required', params: { rule: true } })
  if (JSON.stringify(tree).includes('{{='))
    return void ctx.addIssue({
      code: 'custom',
      message: 'filter rules compare paths and values; {{= }} expressions are not run per item',
      params: { rule: true },
    })
  const parsed = parseRule(tree, { roots: filterRoots })
  if (!parsed.ok)
    for (const issue of parsed.issues)
      ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path], params: { rule: true } })
})

const TransformStep = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('map'),
      field: path.optional(),
      fields: z.record(z.string().min(1).max(200), path).optional(),
    })
    .refine(
      (o) => (o.field === undefined) !== (o.fields === undefined),
      'map takes field (one value per item) or fields ({ name: path }), not both',
    ),
  z.strictObject({ type: z.literal('filter'), rules: itemRules }),
  z.strictObject({ type: z.literal('pick'), fields: fieldList }),
  z.strictObject({ type: z.literal('omit'), fields: fieldList }),
  z.strictObject({ type: z.literal('merge'), with: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ type: z.literal('flatten'), depth: numeric(z.number().int().min(1).max(10)).default(1) }),
  z.strictObject({ type: z.literal('unique'), field: path.optional() }),
  z.strictObject({ type: z.literal('sort'), field: path.optional(), order: z.enum(['asc', 'desc']).default('asc') }),
  z.strictObject({ type: z.literal('reverse') }),
  z.strictObject({
    type: z.literal('slice'),
    start: numeric(z.number().int().min(-maxTransformItems).max(maxTransformItems)).default(0),
    end: numeric(z.number().int().min(-maxTransformItems).max(maxTransformItems)).optional(),
  }),
  z.strictObject({ type: z.literal('groupBy'), field: path }),
])
type TransformStep = z.output<typeof TransformStep>

/**
 * Applies list and object operations to `input` in order, each to the previous one's result: map, filter
 * (a rule tree over `$item`, `$index`), pick, omit, merge, flatten, unique, sort, reverse, slice, groupBy.
 * Output `{ result }`. An operation given the wrong kind of value (sort of an object) fails the step with
 * transform_failed naming it.
 */
export const transform = defineOperation({
  type: 'transform',
  category: 'transform',
  label: 'Transform',
  description:
    'Reshapes a list or object: map, filter, pick, omit, merge, flatten, unique, sort, reverse, slice, groupBy, applied in order; output { result }.',
  effects: 'none',
  // A filter's rules read $item per item: resolved then, not before the step runs.
  rawPaths: ['operations[].rules'],
  configSchema: z.strictObject({
    input: requiredValue().describe('The list or object to transform (a template such as {{$steps.query.rows}})'),
    operations: z.array(TransformStep).min(1).max(50).describe('Operations applied in order: { type, ...options }'),
  }),
  async run(config, ctx) {
    let value: unknown = config.input
    for (const [index, operation] of config.operations.entries()) {
      try {
        value = apply(operation, value, ctx.data)
      } catch (err) {
        if (!(err instanceof TransformFailure)) throw err
        throw new StepError(
          'transform_failed',
          `operations[${index}] (${operation.type}): ${err.message}`,
          { index, type: operation.type },
          400,
          false,
        )
      }
    }
    return { result: value }
  },
})

class TransformFailure extends Error {}

function apply(operation: TransformStep, value: unknown, data: Readonly<Record<string, unknown>>): unknown {
  switch (operation.type) {
    case 'map': {
      const list = listOf(value)
      if (operation.field !== undefined) {
        const at = compiled(operation.field)
        return list.map((item) => readItemPath(item, at) ?? null)
      }
      const fields = Object.entries(operation.fields!).map(([name, p]) => [name, compiled(p)] as const)
      return list.map((item) => Object.fromEntries(fields.map(([name, at]) => [name, readItemPath(item, at) ?? null])))
    }
    case 'filter': {
      const parsed = parseRule(operation.rules, { roots: filterRoots })
      if (!parsed.ok) throw new TransformFailure(parsed.issues[0]!.message)
      return listOf(value).filter((item, index) => test(parsed.rule, { ...data, $item: item, $index: index }))
    }
    case 'pick':
      return eachObject(value, (object) =>
        Object.fromEntries(operation.fields.filter((f) => Object.hasOwn(object, f)).map((f) => [f, object[f]])),
      )
    case 'omit': {
      const omitted = new Set(operation.fields)
      return eachObject(value, (object) => Object.fromEntries(Object.entries(object).filter(([f]) => !omitted.has(f))))
    }
    case 'merge': {
      // A list of objects becomes one object (later keys win); an object is merged with `with`.
      if (Array.isArray(value))
        return Object.fromEntries(listOf(value).flatMap((item, i) => Object.entries(objectOf(item, `item ${i}`))))
      return Object.fromEntries([
        ...Object.entries(objectOf(value, 'the value')),
        ...Object.entries(operation.with ?? {}),
      ])
    }
    case 'flatten':
      return listOf(value).flat(operation.depth)
    case 'unique': {
      const at = operation.field === undefined ? null : compiled(operation.field)
      const kept: unknown[] = []
      const seen: unknown[] = []
      const fast = new Set<unknown>()
      for (const item of listOf(value)) {
        const key = at ? (readItemPath(item, at) ?? null) : item
        const primitive = key === null || typeof key !== 'object'
        if (primitive ? fast.has(key) : seen.some((s) => isDeepStrictEqual(s, key))) continue
        if (primitive) fast.add(key)
        else seen.push(key)
        kept.push(item)
      }
      return kept
    }
    case 'sort': {
      const at = operation.field === undefined ? null : compiled(operation.field)
      const sign = operation.order === 'desc' ? -1 : 1
      const keyed = listOf(value).map((item) => ({ item, key: at ? readItemPath(item, at) : item }))
      // Stable; nulls and missing values last in either order.
      keyed.sort((a, b) => {
        const an = a.key === null || a.key === undefined
        const bn = b.key === null || b.key === undefined
        if (an || bn) return an === bn ? 0 : an ? 1 : -1
        return sign * compareValues(a.key, b.key)
      })
      return keyed.map((k) => k.item)
    }
    case 'reverse':
      return [...listOf(value)].reverse()
    case 'slice':
      return listOf(value).slice(operation.start, operation.end)
    case 'groupBy': {
      const at = compiled(operation.field)
      const groups = new Map<string, unknown[]>()
      for (const item of listOf(value)) {
        const key = readItemPath(item, at)
        const name = key === undefined || key === null ? 'null' : typeof key === 'string' ? key : JSON.stringify(key)
        const group = groups.get(name)
        if (group) group.push(item)
        else groups.set(name, [item])
      }
      // fromEntries defines own properties: a "__proto__" group is an ordinary key.
      return Object.fromEntries(groups)
    }
  }
}

function compiled(p: string): ItemPath {
  const parsed = parseItemPath(p)
  if (typeof parsed === 'string') throw new TransformFailure(parsed)
  return parsed
}

function test(rule: RuleNode, data: Record<string, unknown>): boolean {
  try {
    return evaluateRule(rule, data)
  } catch (err) {
    throw new TransformFailure((err as Error).message)
  }
}

function describeKind(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : isRecord(value) ? 'an object' : `a ${typeof value}`
}

function listOf(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new TransformFailure(`needs a list, and the value is ${describeKind(value)}`)
  if (value.length > maxTransformItems) throw new TransformFailure(`works on at most ${maxTransformItems} items`)
  return value
}

function objectOf(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new TransformFailure(`needs an object, and ${what} is ${describeKind(value)}`)
  return value
}

/** An object, or each object of a list. */
function eachObject(value: unknown, fn: (object: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(value)) return listOf(value).map((item, i) => fn(objectOf(item, `item ${i}`)))
  return fn(objectOf(value, 'the value'))
}

/** Numbers (and numeric strings against numbers) numerically, text by code unit (ISO 8601 dates order), booleans false first; mixed kinds by kind name. */
function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  const ta = typeof a
  const tb = typeof b
  if (ta !== tb) return ta < tb ? -1 : 1
  const ja = JSON.stringify(a)
  const jb = JSON.stringify(b)
  return ja < jb ? -1 : ja > jb ? 1 : 0
}
