import { AppError } from '../../lib/errors.js'
import { readArchiveDocument } from './archive.js'
import type { ValidateRequest } from './schemas.js'

/** The largest document accepted as source (§ Limits). */
export const maxDocumentBytes = 1_000_000

/** The document text: exactly one of source or archive. Throws invalid_request, payload_too_large. */
export async function documentSource(input: ValidateRequest): Promise<string> {
  const { source, archive } = input
  if (source !== undefined && archive !== undefined) {
    throw new AppError('invalid_request', 'Send exactly one of source or archive, not both', {
      fields: ['source', 'archive'],
    })
  }
  if (archive !== undefined) return readArchiveDocument(archive)
  if (source === undefined) {
    throw new AppError('invalid_request', 'source is required: the blueprint document (or archive, a base64 zip)', {
      field: 'source',
    })
  }
  // Every UTF-16 unit is at least one UTF-8 byte, so a longer string is over without counting.
  if (source.length > maxDocumentBytes || Buffer.byteLength(source) > maxDocumentBytes) {
    throw new AppError('payload_too_large', `The document is over ${maxDocumentBytes} bytes`, {
      field: 'source',
      limit: maxDocumentBytes,
    })
  }
  return source
}
