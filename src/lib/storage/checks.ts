import { AppError } from '../errors.js'

/** Checks a declared object size: a whole, non-negative number of bytes. Throws invalid_request. */
export function checkSize(sizeBytes: unknown): number {
  if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) {
    throw new AppError('invalid_request', 'sizeBytes must be a whole number of bytes')
  }
  return sizeBytes
}

/** Checks a download filename: non-empty, at most 1024 characters (it is encoded for the header later). Throws invalid_request. */
export function checkFilename(filename: unknown): string {
  if (typeof filename !== 'string' || filename === '' || filename.length > 1024) {
    throw new AppError('invalid_request', 'filename must be a non-empty string of at most 1024 characters')
  }
  return filename
}

/** Checks a listing limit: 1 to 1000 (S3's page size). Throws invalid_request. */
export function checkListLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new AppError('invalid_request', 'limit must be a whole number from 1 to 1000')
  }
  return limit
}
