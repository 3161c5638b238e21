import { z } from 'zod'
import { BucketError, openBucket } from '../../storage-connections/index.js'
import {
  decodeContent,
  encodeContent,
  fileServicesOf,
  maxReadBytes,
  maxWriteBytes,
  readEncoding,
  throughService,
} from '../file-ops.js'
import { numeric, text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

const keyed = new Set(['put', 'get', 'delete', 'head'])

/**
 * Why a key may not be sent to a bucket, or null. The SDK puts the key in the request path with `.` and `/`
 * as they are, so a `.` or `..` segment (also one NFKC folds to it: `．．`, `‥`) is resolved away by a
 * store or proxy that normalises paths: `../other/x` on a connection to one bucket reads or writes another
 * bucket with the same credentials, or a path above the endpoint's (s3rver even writes outside its
 * directory). A backslash is a separator to some stores, a leading `/` an empty segment, control
 * characters split headers and logs. S3 allows all of these; no real key needs them.
 */
function unsafeBucketKey(key: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'a key may not contain control characters'
  if (key.includes('\\')) return 'a key may not contain a backslash'
  if (key.startsWith('/')) return 'a key may not start with "/"'
  for (const form of [key, key.normalize('NFKC')]) {
    if (form.split(/[\\/]/).some((segment) => segment === '.' || segment === '..'))
      return 'a key may not have a "." or ".." segment'
  }
  return null
}

/** A bucket failure as the step's typed error: blocked_address as the network operations say it, the rest s3_<reason>. */
function stepErrorOf(err: BucketError): StepError {
  const details = { reason: err.reason, remoteStatus: err.remoteStatus, remoteCode: err.remoteCode }
  switch (err.reason) {
    case 'blocked_address':
      return new StepError('blocked_address', err.message, details, 403, false)
    case 'not_found':
      return new StepError('not_found', err.message, details, 404, false)
    case 'too_large':
      return new StepError('too_large', err.message, details, 413, false)
    case 'unreachable':
    case 'timeout':
      return new StepError(err.reason === 'timeout' ? 'timed_out' : 'network_error', err.message, details, 502, true)
    default:
      return new StepError(
        's3_request_failed',
        err.message,
        details,
        502,
        err.remoteStatus !== null && err.remoteStatus >= 500,
      )
  }
}

/**
 * One action on the bucket of a storage connection of the project (core-api "Storage connection"): the
 * connection read as the run's principal (get, list, head: system/storage-connections:read; put, delete:
 * :update), the bucket reached under lib/outbound's address rule (a connection whose endpoint is, or
 * resolves to, a private address is refused with blocked_address before anything is sent).
 */
export const s3Action = defineOperation({
  type: 's3_action',
  category: 'files',
  label: 'S3 action',
  description:
    'put, get, delete, list or head on the bucket of a storage connection; outputs: put { key, sizeBytes, etag }, get { key, content, encoding, contentType, sizeBytes, etag, lastModified }, delete { key, deleted }, list { objects, count, truncated }, head { key, exists, sizeBytes, contentType, etag, lastModified }.',
  // get, list and head only read the bucket (a dry run runs them); put and delete write, as does an action a template chooses.
  effects: 'writes',
  effectsNote: 'reads when action is get, list or head',
  effectsWhen: (config) => (s3Use(config.action) === 'read' ? 'reads' : 'writes'),
  needs: (config) => [
    { resource: 'system/storage-connections', action: s3Use(config.action) === 'read' ? 'read' : 'update' },
  ],
  example: {
    connectionId: '{{$trigger.body.connectionId}}',
    action: 'put',
    key: 'exports/{{$run.id}}.json',
    content: '{{$steps.report.result}}',
    contentType: 'application/json',
  },
  configSchema: z
    .strictObject({
      connectionId: text(64, 1).describe("The storage connection's id"),
      action: z.enum(['put', 'get', 'delete', 'list', 'head']).describe('What to do'),
      key: text(1024)
        .optional()
        .describe(
          'The object key (put, get, delete, head); no "." or ".." segment, backslash, leading "/" or control character',
        ),
      content: text(Math.ceil((maxWriteBytes * 4) / 3) + 4)
        .optional()
        .describe('What put writes: text, or base64 with encoding base64'),
      contentType: text(255, 1).optional().describe('The media type put stores (default application/octet-stream)'),
      encoding: readEncoding().describe(
        'get: the content as text, base64 or parsed JSON; put: content given as text or base64',
      ),
      prefix: text(1024).default('').describe('list: only keys starting with this'),
      maxKeys: numeric(z.number().int().min(1).max(1000))
        .default(100)
        .describe('list: at most this many keys (1-1000)'),
    })
    .superRefine((config, issues) => {
      if (keyed.has(config.action) && (config.key === undefined || config.key === ''))
        issues.addIssue({ code: 'custom', path: ['key'], message: `Required for ${config.action}` })
      const unsafe = keyed.has(config.action) && config.key ? unsafeBucketKey(config.key) : null
      if (unsafe) issues.addIssue({ code: 'custom', path: ['key'], message: unsafe })
      if (config.action === 'put' && config.content === undefined)
        issues.addIssue({ code: 'custom', path: ['content'], message: 'Required for put' })
      if (config.action === 'put' && config.encoding === 'json')
        issues.addIssue({ code: 'custom', path: ['encoding'], message: 'put takes text or base64 content' })
    }),
  async run(config, ctx) {
    const services = fileServicesOf(ctx)
    const write = config.action === 'put' || config.action === 'delete'
    const target = await throughService(() =>
      services.storageConnections.target(ctx.principal, config.connectionId, write ? 'write' : 'read'),
    )
    const key = config.key ?? ''
    const body =
      config.action === 'put'
        ? encodeContent(config.content ?? '', config.encoding === 'base64' ? 'base64' : 'text')
        : null
    if (body && body.length > maxWriteBytes)
      throw new StepError(
        'limit_exceeded',
        `A flow writes at most ${maxWriteBytes} bytes in one step`,
        { limit: maxWriteBytes },
        400,
        false,
      )
    let bucket: Awaited<ReturnType<typeof openBucket>> | undefined
    try {
      bucket = await openBucket(target, { sockets: services.outbound.sockets(), signal: ctx.signal })
      switch (config.action) {
        case 'put': {
          const { etag } = await bucket.put(key, body!, config.contentType ?? 'application/octet-stream')
          return { key, sizeBytes: body!.length, etag }
        }
        case 'get': {
          const object = await bucket.get(key, maxReadBytes)
          return {
            key,
            content: decodeContent(object.body, config.encoding),
            encoding: config.encoding,
            contentType: object.contentType,
            sizeBytes: object.body.length,
            etag: object.etag,
            lastModified: object.lastModified,
          }
        }
        case 'delete':
          await bucket.delete(key)
          return { key, deleted: true }
        case 'list': {
          const { objects, truncated } = await bucket.list(config.prefix, config.maxKeys)
          return { objects, count: objects.length, truncated }
        }
        case 'head': {
          const object = await bucket.head(key)
          return object
            ? { ...object, exists: true }
            : { key, exists: false, sizeBytes: null, contentType: null, etag: null, lastModified: null }
        }
      }
    } catch (err) {
      if (err instanceof BucketError) throw stepErrorOf(err)
      throw err
    } finally {
      bucket?.close()
    }
  },
})

/** Whether the action as saved reads or writes the bucket (a template: it may write); storageConnections.target's `use`. */
function s3Use(action: unknown): 'read' | 'write' {
  return action === 'get' || action === 'list' || action === 'head' ? 'read' : 'write'
}
