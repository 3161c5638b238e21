import { AppError } from '../../lib/errors.js'
import { checkContentType } from '../../lib/storage/index.js'

// eslint-disable-next-line no-control-regex
const controlCharacters = /[\u0000-\u001f\u007f]/

/** A filename as sent: 1 to 255 characters, no control characters. Throws invalid_request. */
export function checkFilename(filename: string, field = 'filename'): string {
  if (filename.trim() === '' || filename.length > 255 || controlCharacters.test(filename)) {
    throw new AppError('invalid_request', `${field} must be 1 to 255 characters without control characters`, { field })
  }
  return filename
}

/** A media type as sent (`image/png`); throws invalid_request naming the field. */
export function checkMimeType(value: string, field = 'mime_type'): string {
  try {
    return checkContentType(value).toLowerCase()
  } catch {
    throw new AppError('invalid_request', `${field} must be a media type such as image/png`, { field })
  }
}
