import { z } from 'zod'
import { parseJsonBounded } from '../../lib/json-bounds.js'
import type { OutboundClient } from '../../lib/outbound/index.js'
import type { FilesService } from '../files/index.js'
import type { StorageConnectionsService } from '../storage-connections/index.js'
import { text } from './schema-helpers.js'
import { StepError, type OperationContext } from './types.js'

/**
 * What the Files operations (file_read, file_upload, file_transform, s3_action) share (decision 040).
 * file_* go through the files service as the run's principal: a key is a file's id, its r2Key, or a flow
 * key (a relative path a flow wrote the file at), never a raw object key, so a flow reaches exactly the files its user
 * reaches over HTTP. s3_action reaches a storage connection's bucket under lib/outbound's address rule.
 */

/** The part of `ctx.services` the Files operations use (wired in app.ts). */
export interface FileServices {
  readonly files: Pick<FilesService, 'readContent' | 'writeContent'>
  readonly storageConnections: Pick<StorageConnectionsService, 'target'>
  readonly outbound: OutboundClient
}

/** The most a flow reads from a file or an object into a step's output: 10 MiB (http_request's bound). */
export const maxReadBytes = 10 * 1024 * 1024
/** The most a flow writes in one step: 10 MiB of bytes (about 14 million base64 characters). */
export const maxWriteBytes = 10 * 1024 * 1024

export function fileServicesOf(ctx: OperationContext): FileServices {
  return ctx.services
}

export { throughService } from './service-call.js'

/** A file key: a file's id, its r2Key, or a flow key. */
export const fileKey = (what: string) => text(1024, 1).describe(what)

/** A file container a step writes into (docs/containers.md): the files service applies its rules as the upload route does. */
export const containerIdConfig = () =>
  text(64, 1)
    .optional()
    .describe(
      "A file container's id: a new file meets its types and size and goes under its prefix, to its storage; a replaced file must already be in it",
    )

export type ReadEncoding = 'text' | 'base64' | 'json'
export const readEncoding = () =>
  z
    .enum(['text', 'base64', 'json'])
    .default('text')
    .describe('How the content is answered: text (UTF-8), base64, or json (parsed)')

/** Bytes as a step's output: UTF-8 text, base64, or parsed JSON. Throws StepError invalid_text, invalid_json (422, not retried). */
export function decodeContent(bytes: Buffer, encoding: ReadEncoding): unknown {
  if (encoding === 'base64') return bytes.toString('base64')
  let content: string
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new StepError('invalid_text', 'The content is not UTF-8 text; read it with encoding base64', {}, 422, false)
  }
  if (encoding === 'text') return content
  try {
    return parseJsonBounded(content)
  } catch (err) {
    throw new StepError(
      'invalid_json',
      `The content is not JSON: ${(err as Error).message.slice(0, 200)}`,
      {},
      422,
      false,
    )
  }
}

const base64Text = /^[A-Za-z0-9+/_-]*={0,2}$/

/** Content as given (text, or base64 when `encoding` says so) as bytes. Throws StepError invalid_content (not retried). */
export function encodeContent(content: string, encoding: 'text' | 'base64'): Buffer {
  if (encoding === 'text') return Buffer.from(content, 'utf8')
  const compact = content.replace(/\s+/g, '')
  if (!base64Text.test(compact) || compact.replace(/=+$/, '').length % 4 === 1)
    throw new StepError('invalid_content', 'content is not base64 text', { field: 'content' }, 400, false)
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64')
}

/** What file_upload and file_transform answer about the file they wrote. */
export function writtenFile(
  file: {
    id: string
    r2Key: string
    filename: string
    mimeType: string
    sizeBytes: number
    sha256: string | null
    visibility: string
    collectionName: string
  },
  replaced: boolean,
) {
  return {
    id: file.id,
    key: file.r2Key,
    filename: file.filename,
    contentType: file.mimeType,
    sizeBytes: file.sizeBytes,
    sha256: file.sha256,
    visibility: file.visibility,
    collectionName: file.collectionName,
    replaced,
  }
}
