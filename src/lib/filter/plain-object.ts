import { isForbiddenKey } from './field-path.js'
import { childPath, filterError } from './filter-error.js'

/** True for what JSON.parse makes of `{…}`: an object whose prototype is Object.prototype or null; throws nothing. */
export function isPlainObject(raw: unknown): raw is Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return false
  const proto: unknown = Object.getPrototypeOf(raw)
  return proto === Object.prototype || proto === null
}

/** The own entries of a plain object, refusing symbol keys and prototype-pollution keys; throws invalid_request. */
export function ownEntries(raw: Record<string, unknown>, at: string): [string, unknown][] {
  if (Object.getOwnPropertySymbols(raw).length > 0) throw filterError(at, 'keys must be strings')
  const entries = Object.entries(raw)
  for (const [key] of entries) {
    if (isForbiddenKey(key)) throw filterError(childPath(at, key), 'forbidden key')
  }
  return entries
}
