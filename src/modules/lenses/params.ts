import { AppError, isAppError } from '../../lib/errors.js'
import { checkFilterBounds } from '../../lib/filter/index.js'
import { parseTemplate, resolveTemplates } from '../../lib/template/index.js'
import type { LensParam } from './schemas.js'

/**
 * A lens's URL parameters: declared on the lens, checked against their type, substituted into the filter's
 * string values as `{{params.<name>}}`. A value only ever lands where a filter value is (template keys are
 * never resolved), so no parameter can change the filter's shape, add a field or an operator.
 */

export type ParamValue = string | number | boolean | null

const datePattern = /^\d{4}-\d{2}-\d{2}$/

function isRealDate(text: string): boolean {
  if (!datePattern.test(text)) return false
  const date = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text
}

/** One value read as its parameter's type. Throws invalid_request naming the parameter. */
export function coerceParam(param: LensParam, raw: unknown, where = 'params'): ParamValue {
  const refuse = (why: string): never => {
    throw new AppError('invalid_request', `${where}.${param.name}: ${why}`, { param: param.name })
  }
  if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean')
    refuse('must be text, a number or a boolean')
  const text = String(raw)
  let value: ParamValue
  switch (param.type) {
    case 'text':
      if (text.length > param.maxLength) refuse(`at most ${param.maxLength} characters`)
      value = text
      break
    case 'number':
    case 'integer': {
      const n = typeof raw === 'number' ? raw : text.trim() === '' ? Number.NaN : Number(text)
      if (!Number.isFinite(n)) refuse('must be a number')
      if (param.type === 'integer' && !Number.isSafeInteger(n)) refuse('must be a whole number')
      value = n
      break
    }
    case 'boolean':
      if (raw === true || text === 'true' || text === '1') value = true
      else if (raw === false || text === 'false' || text === '0') value = false
      else value = refuse('must be true or false')
      break
    case 'date':
      if (!isRealDate(text)) refuse('must be a date, YYYY-MM-DD')
      value = text
      break
  }
  if (param.values && !param.values.some((allowed) => String(allowed) === String(value)))
    refuse(`must be one of ${param.values.map(String).join(', ').slice(0, 200)}`)
  return value
}

/**
 * The parameters' values for one render: each given one checked, defaults filled in, a missing required
 * one refused, and a name the lens does not declare refused (so a typo is not silently ignored).
 * Throws invalid_request.
 */
export function resolveParams(
  declared: readonly LensParam[],
  given: Readonly<Record<string, unknown>>,
): Record<string, ParamValue> {
  const byName = new Map(declared.map((p) => [p.name, p]))
  const unknown = Object.keys(given).filter((name) => !byName.has(name))
  if (unknown.length > 0) {
    const known =
      declared.length > 0
        ? `; this lens declares ${declared.map((p) => p.name).join(', ')}`
        : '; this lens declares none'
    throw new AppError(
      'invalid_request',
      `Unknown parameter ${unknown
        .map((n) => JSON.stringify(n.slice(0, 64)))
        .join(', ')
        .slice(0, 300)}${known}`,
      { unknown: unknown.slice(0, 20).map((n) => n.slice(0, 64)) },
    )
  }
  const out: Record<string, ParamValue> = {}
  for (const param of declared) {
    const raw = Object.prototype.hasOwnProperty.call(given, param.name) ? given[param.name] : undefined
    if (raw !== undefined) out[param.name] = coerceParam(param, raw)
    else if (param.default !== undefined) out[param.name] = coerceParam(param, param.default, 'default')
    else if (param.required)
      throw new AppError('invalid_request', `params.${param.name} is required`, { param: param.name })
    else out[param.name] = null
  }
  return out
}

/** A stand-in value of each parameter's type: what the save-time check runs the filter with. */
export function sampleParams(declared: readonly LensParam[]): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {}
  for (const param of declared) {
    const raw = param.default ?? param.values?.[0]
    if (raw !== undefined) out[param.name] = coerceParam(param, raw, 'default')
    else
      out[param.name] =
        param.type === 'text' ? 'x' : param.type === 'boolean' ? true : param.type === 'date' ? '2000-01-01' : 0
  }
  return out
}

/**
 * The records API's bounds on a filter (lib/filter checkFilterBounds: 8 levels, 16 KiB, …), checked
 * first, with its own stack: everything after it (the tag check, substitution, JSON.stringify) recurses.
 * Throws validation_error naming where (`filter._and[0]…`).
 */
export function checkLensFilterBounds(filter: unknown): void {
  if (filter === undefined || filter === null) return
  try {
    checkFilterBounds(filter, 'filter')
  } catch (err) {
    if (isAppError(err)) throw new AppError('validation_error', err.message, { at: err.details.path ?? 'filter' })
    throw err
  }
}

/** Every string in a filter tree (values only; keys are not templates). */
function* strings(value: unknown, path: string): Generator<{ text: string; path: string }> {
  if (typeof value === 'string') yield { text: value, path }
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* strings(item, `${path}[${i}]`)
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) yield* strings(item, `${path}.${key}`)
}

/**
 * The save-time check of a filter's tags: each parses, is a path under `params` (no `{{= }}`), and names
 * a declared parameter. Throws validation_error naming the place.
 */
export function checkFilterParams(filter: unknown, declared: readonly LensParam[]): void {
  const names = new Set(declared.map((p) => p.name))
  for (const { text, path } of strings(filter, 'filter')) {
    const parsed = parseTemplate(text)
    if (!parsed.ok) throw new AppError('validation_error', `${path}: ${parsed.error.message}`, { at: path })
    for (const part of parsed.template.parts) {
      if (part.kind === 'text') continue
      if (part.kind === 'expression')
        throw new AppError(
          'validation_error',
          `${path}: ${part.source.slice(0, 60)}: expressions are not allowed in a lens filter; use {{params.<name>}}`,
          { at: path },
        )
      const first = part.segments[0]
      if (part.root !== 'params' || part.segments.length !== 1 || first?.kind !== 'key') {
        throw new AppError(
          'validation_error',
          `${path}: ${part.source.slice(0, 60)}: a lens filter reads only {{params.<name>}}`,
          { at: path },
        )
      }
      if (!names.has(first.key))
        throw new AppError('validation_error', `${path}: ${part.source.slice(0, 60)} names no declared parameter`, {
          at: path,
          param: first.key.slice(0, 64),
        })
    }
  }
}

/** The filter with `{{params.<name>}}` resolved: a whole-value tag takes the value with its type, one inside text is written into it. */
export function substituteFilter<F>(filter: F, values: Readonly<Record<string, ParamValue>>): F {
  return resolveTemplates(filter, { params: values }).value as F
}
