import type { FieldPath } from './ast.js'
import { filterError, quote } from './filter-error.js'
import { filterLimits } from './limits.js'

// The first line of defence against SQL injection; the schema check comes later. Written without the `i`
// and `u` flags on purpose: under `iu`, U+212A KELVIN SIGN and U+017F LONG S would match `k` and `s`.
const segmentPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const forbiddenSegments: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

/** True for the keys that must never be read or written on an object built from input; throws nothing. */
export function isForbiddenKey(key: string): boolean {
  return forbiddenSegments.has(key)
}

/** Splits a dotted field name (`meta.size`) into checked segments; throws invalid_request. */
export function parseFieldPath(raw: unknown, at: string): FieldPath {
  if (typeof raw !== 'string') throw filterError(at, 'field name must be a string')
  const segments = raw.split('.')
  if (segments.length > filterLimits.maxPathSegments) {
    throw filterError(at, `field name has more than ${filterLimits.maxPathSegments} segments`)
  }
  for (const segment of segments) {
    if (!segmentPattern.test(segment)) throw filterError(at, `invalid field name ${quote(raw)}`)
    if (forbiddenSegments.has(segment)) throw filterError(at, `forbidden field name ${quote(raw)}`)
  }
  const [first, ...rest] = segments
  if (first === undefined) throw filterError(at, `invalid field name ${quote(raw)}`)
  return Object.freeze([first, ...rest])
}
