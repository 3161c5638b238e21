import { AppError } from '../errors.js'

/** S3's own limit on a key's length. */
export const maxKeyBytes = 1024

/**
 * Checks an object key (`projects/<projectId>/…`): relative, slash-separated, no empty, `.` or `..`
 * segments, no `..` anywhere, no backslash, NUL or other control character, at most 1024 bytes. Both
 * drivers apply it, so a key that works on one works on the other and none can leave the local root.
 * Throws invalid_request.
 */
export function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw badKey('an object key must be a non-empty string')
  refuseUnsafe(key)
  if (key.split('/').some((segment) => segment === '' || segment === '.')) {
    throw badKey('an object key may not have empty or "." segments, nor start or end with "/"')
  }
  return key
}

/** Checks a listing prefix: empty (everything), or a key's start with the same rules. Throws invalid_request. */
export function checkPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string') throw badKey('a prefix must be a string')
  if (prefix === '') return prefix
  refuseUnsafe(prefix)
  const segments = prefix.split('/')
  // A prefix may end with "/" (a folder) but has no other empty or "." segment.
  if (segments.slice(0, -1).some((s) => s === '' || s === '.') || segments.at(-1) === '.') {
    throw badKey('a prefix may not have empty or "." segments')
  }
  return prefix
}

function refuseUnsafe(value: string): void {
  if (Buffer.byteLength(value) > maxKeyBytes) throw badKey(`an object key may be at most ${maxKeyBytes} bytes`)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(value))
    throw badKey('an object key may not contain control characters or backslashes')
  if (value.startsWith('/') || /^[A-Za-z]:/.test(value)) throw badKey('an object key must be relative')
  if (value.includes('..')) throw badKey('an object key may not contain ".."')
}

function badKey(message: string): AppError {
  return new AppError('invalid_request', `Invalid object key: ${message}`)
}
