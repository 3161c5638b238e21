import type { PathPart, PathSegment } from './ast.js'

/** Why a tag gave the empty value instead of a value. */
export type UnresolvedReason =
  | 'unknown_root'
  | 'missing_key'
  | 'index_out_of_range'
  | 'not_an_object'
  | 'not_an_array'
  | 'not_data'
  | 'not_serialisable'
  | 'too_long'
  | 'expression_unavailable'
  | 'expression_failed'
  | 'invalid_template'

export type Lookup = { ok: true; value: unknown } | { ok: false; reason: UnresolvedReason; message: string }

const canonicalIndex = /^(0|[1-9][0-9]*)$/

/**
 * Reads a path over plain data: own data properties of plain objects and elements of arrays only, so no
 * getter, function, prototype or inherited name (`toString`, an array's `length`) is ever reached.
 */
export function lookupPath(context: unknown, path: PathPart): Lookup {
  const root = ownValue(context, path.root)
  if (root === undefined) return { ok: false, reason: 'unknown_root', message: `${path.root} is not available here` }
  let value: unknown = root
  let where = path.root
  for (const segment of path.segments) {
    const next = step(value, segment, where)
    if (!next.ok) return next
    value = next.value
    where += describe(segment)
  }
  if (!isData(value)) return { ok: false, reason: 'not_data', message: `${where} is not plain data` }
  return { ok: true, value }
}

function step(value: unknown, segment: PathSegment, where: string): Lookup {
  const shown = `${where}${describe(segment)}`
  if (Array.isArray(value)) {
    const index =
      segment.kind === 'index' ? segment.index : canonicalIndex.test(segment.key) ? Number(segment.key) : null
    if (index === null)
      return {
        ok: false,
        reason: 'not_an_object',
        message: `${where} is an array: read it with an index, not ${shown}`,
      }
    if (index >= value.length)
      return {
        ok: false,
        reason: 'index_out_of_range',
        message: `${shown} is past the end of ${where} (${value.length} items)`,
      }
    const item = ownValue(value, String(index))
    return item === undefined
      ? { ok: false, reason: 'missing_key', message: `${shown} is empty` }
      : { ok: true, value: item }
  }
  if (isPlainObject(value)) {
    if (segment.kind === 'index')
      return { ok: false, reason: 'not_an_array', message: `${where} is an object, not an array` }
    const child = ownValue(value, segment.key)
    return child === undefined
      ? { ok: false, reason: 'missing_key', message: `${where} has no ${JSON.stringify(segment.key)}` }
      : { ok: true, value: child }
  }
  if (!isData(value)) return { ok: false, reason: 'not_data', message: `${where} is not plain data` }
  const kind = value === null ? 'null' : `a ${typeof value}`
  return segment.kind === 'index'
    ? { ok: false, reason: 'not_an_array', message: `${where} is ${kind}, not an array` }
    : { ok: false, reason: 'not_an_object', message: `${where} is ${kind}, not an object` }
}

/** An own data property's value; undefined when absent, undefined, or an accessor (never called). */
function ownValue(holder: unknown, key: string): unknown {
  if (!isPlainObject(holder) && !Array.isArray(holder)) return undefined
  const descriptor = Object.getOwnPropertyDescriptor(holder, key)
  return descriptor && 'value' in descriptor ? descriptor.value : undefined
}

/** What JSON.parse makes of `{…}`: an object whose prototype is Object.prototype or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** JSON-shaped at the top: null, a string, a number, a boolean, an array or a plain object. */
export function isData(value: unknown): boolean {
  if (value === null || Array.isArray(value)) return true
  const type = typeof value
  return type === 'string' || type === 'number' || type === 'boolean' || isPlainObject(value)
}

const bareName = /^[\p{L}\p{N}_$-]+$/u

function describe(segment: PathSegment): string {
  if (segment.kind === 'index') return `[${segment.index}]`
  return bareName.test(segment.key) ? `.${segment.key}` : `[${JSON.stringify(segment.key)}]`
}
