import { AppError } from '../errors.js'

const plainKey = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/

/** Builds (does not throw) the error of every malformed filter: invalid_request naming where, e.g. `filter._or[1].age: …`. */
export function filterError(at: string, message: string): AppError {
  return new AppError('invalid_request', `${at}: ${message}`, { path: at })
}

/** The location of a key or an index under `at`; hostile keys are quoted and cut short. Throws nothing. */
export function childPath(at: string, key: string | number): string {
  if (typeof key === 'number') return `${at}[${key}]`
  return plainKey.test(key) && key.length <= 64 ? `${at}.${key}` : `${at}[${quote(key)}]`
}

/**
 * A string shown in a message: JSON-quoted, cut at 40 characters so input is never echoed at length, and
 * with everything outside printable ASCII escaped, so a look-alike (a Cyrillic letter, U+200B) shows for what it is.
 * Throws nothing.
 */
export function quote(text: string): string {
  const cut = text.length > 40 ? `${text.slice(0, 40)}...` : text
  return JSON.stringify(cut).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
