import { AppError } from '../errors.js'

const mediaType = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;\s*[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\\\r\n]*"))*$/

/** Checks a Content-Type value (`type/subtype` with optional parameters, at most 255 characters). Throws invalid_request. */
export function checkContentType(value: unknown): string {
  if (typeof value !== 'string' || value.length > 255 || !mediaType.test(value.trim())) {
    throw new AppError('invalid_request', 'contentType must be a media type such as image/png')
  }
  return value.trim()
}

/** Whether two Content-Type values name the same type: case and spaces around `;` do not matter. Throws nothing. */
export function sameContentType(a: string, b: string): boolean {
  return normalise(a) === normalise(b)
}

function normalise(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .replace(/\s*;\s*/g, ';')
}
