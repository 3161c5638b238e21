import { Readable } from 'node:stream'
import type { Context } from 'hono'
import { AppError } from '../../lib/errors.js'
import { refusalBeforeBodyEnd } from '../../lib/http/unread-body.js'
import { createRouter, defineRoute, errorResponses, z, type AppEnv } from '../../lib/http/index.js'
import {
  contentDisposition,
  signedObjectPath,
  type GetGrant,
  type LocalStorage,
  type PutGrant,
} from '../../lib/storage/index.js'
import { SignedGetQuery, SignedPutQuery } from './schemas.js'
import { byteRange, sandboxed } from './serve.js'

export const putObjectRoute = defineRoute({
  method: 'put',
  path: signedObjectPath,
  operationId: 'storage.putObject',
  summary: 'Upload the bytes of a presigned upload URL (local storage)',
  description:
    'The uploadUrl of POST /api/v1/files/upload-token when files live on the local disk. The signature is the ' +
    'credential: no session is read. The body must be exactly the signed size, with the signed Content-Type.',
  tags: ['Storage'],
  permission: null,
  request: {
    query: SignedPutQuery,
    body: { required: true, content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } } },
  },
  responses: {
    200: { description: 'Stored (empty body)' },
    ...errorResponses('invalid_request', 'forbidden', 'conflict', 'payload_too_large'),
  },
})

export const getObjectRoute = defineRoute({
  method: 'get',
  path: signedObjectPath,
  operationId: 'storage.getObject',
  summary: 'Download the object of a presigned download URL (local storage; HEAD too)',
  description:
    'The downloadUrl of GET /api/v1/files/download-token/:id when files live on the local disk. Streams the bytes ' +
    'with Content-Type, Content-Length and Content-Disposition; honours a single byte Range.',
  tags: ['Storage'],
  permission: null,
  request: { query: SignedGetQuery },
  responses: {
    200: { description: 'The bytes', content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } } },
    206: { description: 'The requested byte range' },
    ...errorResponses('forbidden', 'not_found'),
  },
})

/**
 * The local driver's signed URLs, served by Plinth. Mounted before the global body limit: an upload is
 * bounded by its signed size instead, and streamed to disk, never held in memory.
 */
export function storageObjectRoutes(storage: LocalStorage) {
  const router = createRouter()

  router.openapi(putObjectRoute, async (c) => {
    const incoming = c.env?.incoming
    try {
      const grant = storage.authorize('PUT', c.req.query()) as PutGrant
      const body = incoming ?? (c.req.raw.body ? Readable.fromWeb(c.req.raw.body as never) : Readable.from([]))
      const length = c.req.header('content-length')
      await storage.receive(grant, body, {
        contentType: c.req.header('content-type'),
        contentLength: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
      })
      return c.body(null, 200)
    } catch (err) {
      throw await refusalBeforeBodyEnd(err, incoming)
    }
  })

  router.openapi(getObjectRoute, async (c) => {
    const grant = storage.authorize('GET', c.req.query()) as GetGrant
    const opened = await storage.open(grant.key)
    if (!opened) throw new AppError('not_found', 'No object is stored at this key')
    const contentType = grant.contentType ?? opened.contentType ?? 'application/octet-stream'
    const headers: Record<string, string> = {
      'Content-Type': contentType,
      'Accept-Ranges': 'bytes',
      'Last-Modified': opened.modifiedAt.toUTCString(),
      'Cache-Control': 'private',
      'X-Content-Type-Options': 'nosniff',
    }
    if (grant.filename !== null) headers['Content-Disposition'] = contentDisposition(grant.filename)
    // Served from Plinth's own origin: a stored HTML or SVG file must not run as a page of the API. A type a
    // browser only displays gets no policy, not even the transport's strict default (security-headers.ts),
    // which would block the inline styling of Chrome's own image and media pages.
    if (sandboxed(contentType)) headers['Content-Security-Policy'] = "default-src 'none'; sandbox"
    else c.env?.outgoing?.removeHeader('Content-Security-Policy')
    const range = byteRange(c.req.header('range'), opened.sizeBytes)
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${opened.sizeBytes}`
    headers['Content-Length'] = String(range ? range.end - range.start + 1 : opened.sizeBytes)
    const status = range ? 206 : 200
    if (isHead(c)) {
      await opened.close()
      return c.body(null, status, headers)
    }
    return c.body(Readable.toWeb(opened.stream(range ?? undefined)) as ReadableStream, status, headers)
  })

  return router
}

function isHead(c: Context<AppEnv>): boolean {
  // Hono answers HEAD with the GET handler; the raw method still says HEAD.
  return c.req.raw.method === 'HEAD'
}
