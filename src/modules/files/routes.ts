import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import type { Context } from 'hono'
import { refusalBeforeBodyEnd } from '../../lib/http/unread-body.js'
import {
  createRouter,
  dataEnvelope,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type AppEnv,
  type Security,
} from '../../lib/http/index.js'
import type { UploadBody } from './ingest.js'
import {
  DownloadTokenReply,
  FileIdParams,
  FileSchema,
  ListQuery,
  ListReply,
  multipartBody,
  RegenerateBody,
  RegenerateOneReply,
  RegenerateReply,
  SuccessReply,
  UploadTokenBody,
  UploadTokenReply,
} from './schemas.js'
import type { FilesService } from './service.js'

const tags = ['Files']
const base = '/api/v1/files'
const idParams = { params: FileIdParams }
const single = (description: string) => jsonContent(dataEnvelope(FileSchema), description)

const uploadToken = defineRoute({
  method: 'post',
  path: `${base}/upload-token`,
  operationId: 'files.uploadToken',
  summary: 'Reserve a file and get a presigned PUT URL (120 s)',
  tags,
  permission: 'system/files:create',
  request: jsonBody(UploadTokenBody),
  responses: {
    200: jsonContent(UploadTokenReply, 'Upload URL'),
    ...errorResponses('invalid_request', 'limit_exceeded', 'unauthorized', 'forbidden'),
  },
})
const confirmUpload = defineRoute({
  method: 'post',
  path: `${base}/confirm-upload/{id}`,
  operationId: 'files.confirmUpload',
  summary: 'Mark an upload complete (uploader only)',
  tags,
  permission: 'system/files:create',
  request: idParams,
  responses: {
    200: jsonContent(SuccessReply, 'Confirmed'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const downloadToken = defineRoute({
  method: 'get',
  path: `${base}/download-token/{id}`,
  operationId: 'files.downloadToken',
  summary: 'A presigned GET URL (300 s) for the file or a named variant',
  tags,
  permission: 'system/files:read',
  request: { ...idParams, query: z.object({ size: z.string().max(64).optional() }) },
  responses: {
    200: jsonContent(DownloadTokenReply, 'Download URL'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const listFiles = defineRoute({
  method: 'get',
  path: base,
  operationId: 'files.list',
  summary: 'Complete files, newest first',
  tags,
  permission: 'system/files:read',
  request: { query: ListQuery },
  responses: {
    200: jsonContent(ListReply, 'Files'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const getFile = defineRoute({
  method: 'get',
  path: `${base}/{id}`,
  operationId: 'files.get',
  summary: "A file's metadata",
  tags,
  permission: 'system/files:read',
  request: idParams,
  responses: { 200: single('The file'), ...errorResponses('unauthorized', 'forbidden', 'not_found') },
})
const replaceFile = defineRoute({
  method: 'post',
  path: `${base}/{id}/replace`,
  operationId: 'files.replace',
  summary: "Replace a file's bytes (multipart field file, about 95 MB at most)",
  tags,
  permission: 'system/files:update',
  request: {
    ...idParams,
    ...multipartBody({ file: { type: 'string', format: 'binary', description: 'The new bytes' } }, ['file']),
  },
  responses: {
    200: single('The updated file'),
    ...errorResponses(
      'invalid_request',
      'limit_exceeded',
      'unauthorized',
      'forbidden',
      'not_found',
      'conflict',
      'unsupported_media_type',
      'service_unavailable',
    ),
  },
})
const deleteFile = defineRoute({
  method: 'delete',
  path: `${base}/{id}`,
  operationId: 'files.delete',
  summary: 'Delete a file, its bytes and its variants',
  tags,
  permission: 'system/files:delete',
  request: idParams,
  responses: {
    200: jsonContent(SuccessReply, 'Deleted'),
    ...errorResponses('unauthorized', 'forbidden', 'not_found', 'service_unavailable'),
  },
})
const regenerateOne = defineRoute({
  method: 'post',
  path: `${base}/{id}/regenerate`,
  operationId: 'files.regenerate',
  summary: "Make a file's variants again",
  tags,
  permission: 'system/files:update',
  request: idParams,
  responses: {
    200: jsonContent(RegenerateOneReply, 'Result'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const regenerateMany = defineRoute({
  method: 'post',
  path: `${base}/regenerate`,
  operationId: 'files.regenerateAll',
  summary: 'Make variants again, one page of files at a time',
  tags,
  permission: 'system/files:update',
  request: { body: { required: false, content: { 'application/json': { schema: RegenerateBody } } } },
  responses: {
    200: jsonContent(RegenerateReply, 'One page'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const attachVariant = defineRoute({
  method: 'post',
  path: `${base}/{id}/variant`,
  operationId: 'files.attachVariant',
  summary: 'Attach a client-made preview (uploader only)',
  tags,
  permission: 'system/files:create',
  request: {
    ...idParams,
    ...multipartBody(
      {
        file: { type: 'string', format: 'binary', description: 'An image, at most 10 MB' },
        name: { type: 'string', description: 'The variant name, e.g. thumbnail or preview' },
      },
      ['file', 'name'],
    ),
  },
  responses: {
    200: single('The file with the variant'),
    ...errorResponses(
      'invalid_request',
      'limit_exceeded',
      'unauthorized',
      'forbidden',
      'not_found',
      'conflict',
      'unsupported_media_type',
    ),
  },
})
const proxyUpload = defineRoute({
  method: 'post',
  path: `${base}/upload`,
  operationId: 'files.upload',
  summary: 'Upload through the service in one request (about 95 MB at most)',
  tags,
  permission: 'system/files:create',
  request: multipartBody(
    {
      file: {
        type: 'string',
        format: 'binary',
        description: "The bytes; the part's filename and Content-Type are kept",
      },
      visibility: { type: 'string', enum: ['public', 'private'], description: 'Default public' },
      collection_name: { type: 'string', description: 'Default __system' },
      container_id: {
        type: 'string',
        description: 'A file container (sent before file): its types, size, prefix, visibility and variants apply',
      },
    },
    ['file'],
  ),
  responses: {
    201: single('The stored file'),
    ...errorResponses('invalid_request', 'limit_exceeded', 'unauthorized', 'forbidden', 'unsupported_media_type'),
  },
})

/** The unread request body: Node's own request under the Node server, the WHATWG stream otherwise. */
function bodyOf(c: Context<AppEnv>): UploadBody {
  const incoming = c.env?.incoming
  const header = (name: string) => (incoming ? (incoming.headers[name] as string | undefined) : c.req.header(name))
  const length = header('content-length')
  // Touching c.req.raw.body under Node would start a WHATWG stream reading the socket: only without Node.
  const raw = incoming ? null : c.req.raw.body
  const source: AsyncIterable<Uint8Array> =
    incoming ?? (raw ? Readable.fromWeb(raw as WebReadableStream<Uint8Array>) : Readable.from([]))
  return {
    source,
    contentType: header('content-type'),
    contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
  }
}

/** A refusal sent before the whole body was read: see refusalBeforeBodyEnd. */
async function closingIfUnread<T>(c: Context<AppEnv>, work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (err) {
    throw await refusalBeforeBodyEnd(err, c.env?.incoming)
  }
}

/** /api/v1/files: presigned uploads and downloads, metadata, deletes, regeneration (JSON bodies, under the body limit). */
export function filesRoutes(files: FilesService, security: Security) {
  const router = createRouter(security)
  router.openapi(uploadToken, async (c) => {
    // Server-owned fields a client sent (uploadedBy, status, …) are ignored: not passed on.
    const { filename, mime_type, size_bytes, collection_name, visibility, container_id } = c.req.valid('json')
    return c.json(
      await files.uploadToken(principalOf(c), {
        filename,
        mime_type,
        size_bytes,
        collection_name,
        visibility,
        ...(container_id === undefined ? {} : { container_id }),
      }),
      200,
    )
  })
  router.openapi(confirmUpload, async (c) => c.json(await files.confirm(principalOf(c), c.req.valid('param').id), 200))
  router.openapi(downloadToken, async (c) =>
    c.json(await files.downloadToken(principalOf(c), c.req.valid('param').id, c.req.valid('query').size), 200),
  )
  router.openapi(listFiles, async (c) => c.json(await files.list(principalOf(c), c.req.valid('query')), 200))
  router.openapi(regenerateMany, async (c) => c.json(await files.regenerate(principalOf(c), c.req.valid('json')), 200))
  router.openapi(getFile, async (c) => c.json({ data: await files.get(principalOf(c), c.req.valid('param').id) }, 200))
  router.openapi(deleteFile, async (c) => c.json(await files.delete(principalOf(c), c.req.valid('param').id), 200))
  router.openapi(regenerateOne, async (c) =>
    c.json({ data: await files.regenerateOne(principalOf(c), c.req.valid('param').id) }, 200),
  )
  return router
}

/**
 * The multipart routes (proxy upload, replace, client variants): mounted ahead of the global body limit,
 * as they stream their bodies to storage and bound them themselves (about 95 MB; 10 MB for a variant).
 */
export function filesStreamingRoutes(files: FilesService, security: Security) {
  const router = createRouter(security)
  router.openapi(proxyUpload, async (c) =>
    c.json({ data: await closingIfUnread(c, files.upload(principalOf(c), bodyOf(c))) }, 201),
  )
  router.openapi(replaceFile, async (c) =>
    c.json({ data: await closingIfUnread(c, files.replace(principalOf(c), c.req.valid('param').id, bodyOf(c))) }, 200),
  )
  router.openapi(attachVariant, async (c) =>
    c.json(
      { data: await closingIfUnread(c, files.attachVariant(principalOf(c), c.req.valid('param').id, bodyOf(c))) },
      200,
    ),
  )
  return router
}
