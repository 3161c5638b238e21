import type { Dialect, ValueKind } from './field-def.js'

/**
 * Turning stored values back into API values. Nothing here throws: a value written behind the API's back
 * is returned as it is rather than failing the whole read.
 */

/** JSON kept as TEXT in SQLite is parsed; PostgreSQL's jsonb arrives parsed. */
export function decodeJson(value: unknown, dialect: Dialect): unknown {
  if (dialect !== 'sqlite' || typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

/** SQLite keeps booleans as 0/1. */
export function decodeBoolean(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'bigint') return value !== 0 && value !== 0n
  if (value === '1' || value === 't' || value === 'true') return true
  if (value === '0' || value === 'f' || value === 'false') return false
  return value
}

const numeric = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/** PostgreSQL numeric (and aggregates over it) arrive as strings; 64-bit integers may arrive as bigint. */
export function decodeNumber(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'string' && numeric.test(value)) return Number(value)
  return value
}

/** A value decoded by its filter kind: what lookups and rollups read through. */
export function decodeByKind(value: unknown, kind: ValueKind, dialect: Dialect): unknown {
  switch (kind) {
    case 'boolean':
      return decodeBoolean(value)
    case 'integer':
    case 'number':
      return decodeNumber(value)
    case 'json':
      return decodeJson(value, dialect)
    case 'text':
      return value
  }
}
