import { AppError } from '../../lib/errors.js'

/** A keyset position: the sort value and id of a row, and which way the page runs from it. */
export interface CursorPosition {
  readonly value: string | number | boolean | null
  readonly id: string
  readonly direction: 'next' | 'previous'
  /** The sort it was made for; a cursor is refused under another sort. */
  readonly sort: string
}

/** Encodes a position as an opaque token (base64url JSON). */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(
    JSON.stringify([position.sort, position.direction === 'next' ? 1 : 0, position.value, position.id]),
  ).toString('base64url')
}

/** Decodes a token made by `encodeCursor` for this sort. Throws invalid_request for anything else. */
export function decodeCursor(token: string, sort: string): CursorPosition {
  const invalid = () => new AppError('invalid_request', 'cursor is not a cursor of this list; start again with cursor=')
  if (token.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid()
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    throw invalid()
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw invalid()
  const [cursorSort, direction, value, id] = parsed as unknown[]
  const scalar = value === null || ['string', 'number', 'boolean'].includes(typeof value)
  if (
    cursorSort !== sort ||
    (direction !== 0 && direction !== 1) ||
    !scalar ||
    typeof id !== 'string' ||
    id.length > 64
  )
    throw invalid()
  if (typeof value === 'number' && !Number.isFinite(value)) throw invalid()
  return { sort, direction: direction === 1 ? 'next' : 'previous', value: value as CursorPosition['value'], id }
}
