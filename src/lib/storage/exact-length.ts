import { AppError } from '../errors.js'

/** A body must be exactly `bytes` long; a longer one fails with `tooLarge` as soon as it is seen. */
export interface Exact {
  bytes: number
  tooLarge(limit: number): AppError
}

/** Throws `exact.tooLarge` (longer) or invalid_request (shorter) unless `actual` is exactly the expected length. */
export function checkLength(actual: number, exact: Exact): void {
  if (actual > exact.bytes) throw exact.tooLarge(exact.bytes)
  if (actual < exact.bytes) {
    throw new AppError('invalid_request', `The body is ${actual} bytes; it must be exactly ${exact.bytes}`, {
      expected: exact.bytes,
      received: actual,
    })
  }
}

/** A `put` whose stream runs past its announced sizeBytes: the caller's mistake, not an oversized upload. */
export function wrongLength(limit: number): AppError {
  return new AppError('invalid_request', `The body is longer than sizeBytes (${limit})`, { expected: limit })
}

/** A signed upload's body past the size it was signed for. */
export function tooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `The body is larger than the ${limit} bytes this upload allows`, { limit })
}
