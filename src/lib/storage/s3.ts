import { Readable } from 'node:stream'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { systemClock, type Clock } from '../clock.js'
import { AppError } from '../errors.js'
import { checkFilename, checkListLimit, checkSize } from './checks.js'
import { checkContentType } from './content-type.js'
import { contentDisposition } from './disposition.js'
import { checkKey, checkPrefix } from './keys.js'
import { checkExpiresIn } from './signed-url.js'
import type { ObjectStorage } from './types.js'

export interface S3StorageOptions {
  endpoint: string
  /**
   * The endpoint as clients reach it, when they cannot use `endpoint` (a name only the server's network
   * resolves): presigned URLs are signed for this host, since the host is part of the signature.
   */
  publicEndpoint?: string | null
  bucket: string
  accessKeyId: string
  secretAccessKey: string
  /** `auto` suits R2; AWS wants the bucket's region. */
  region: string
  /** Bucket in the path (`endpoint/bucket/key`) rather than the host name; true by default, as MinIO and R2 expect. */
  forcePathStyle?: boolean
  /** Signing time of presigned URLs. */
  clock?: Clock
  /** Size of each part when a stream of unknown length is uploaded in parts (at least 5 MiB, S3's minimum). */
  partSizeBytes?: number
}

/** Any S3-compatible store (AWS, R2, MinIO). */
export interface S3Storage extends ObjectStorage {
  readonly kind: 's3'
  readonly bucket: string
}

const minPartSize = 5 * 1024 * 1024

/**
 * The S3 driver. Presigned PUT URLs sign Content-Type and Content-Length, so the store itself refuses a
 * larger, shorter or differently typed body. Credentials stay inside the client; errors carry the store's
 * error name, never a key. Store failures throw service_unavailable (details.storageError names the cause).
 */
export function createS3Storage(options: S3StorageOptions): S3Storage {
  const clientFor = (endpoint: string) =>
    new S3Client({
      endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? true,
      credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
      // Checksums only where S3 requires them: R2, MinIO and older stores refuse the newer default headers,
      // and a presigned PUT must not carry a checksum of a body it has not seen.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
    })
  const client = clientFor(options.endpoint)
  // Signing only: this client never sends a request, so it opens no connection.
  const presigner = options.publicEndpoint ? clientFor(options.publicEndpoint) : undefined
  return createS3StorageOn(client, {
    ...options,
    presigner,
    onClose: () => {
      client.destroy()
      presigner?.destroy()
    },
  })
}

export interface S3ClientStorageOptions {
  bucket: string
  clock?: Clock
  partSizeBytes?: number
  /**
   * The error a store failure becomes, before the default (service_unavailable naming the store's error):
   * a caller whose endpoint is user-supplied words it without the SDK's text and names refused addresses.
   */
  describeError?: (err: unknown) => AppError | undefined
  /** Runs at close instead of destroying the client (the caller owns what it built the client with). */
  onClose?: () => void
  /** Signs presigned URLs instead of the client (for another host: see S3StorageOptions.publicEndpoint). */
  presigner?: S3Client | undefined
}

/** The S3 driver over a client built elsewhere (storage connections: their own agents, under the outbound rule). */
export function createS3StorageOn(client: S3Client, options: S3ClientStorageOptions): S3Storage {
  const clock = options.clock ?? systemClock
  const partSize = Math.max(options.partSizeBytes ?? 8 * 1024 * 1024, minPartSize)
  const Bucket = options.bucket
  const presigner = options.presigner ?? client
  const storageError = (err: unknown): AppError =>
    err instanceof AppError ? err : (options.describeError?.(err) ?? defaultStorageError(err))

  async function send<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (err) {
      throw storageError(err)
    }
  }

  /**
   * Uploads a stream one part at a time (one part in memory): a single PutObject when it fits in one part,
   * else a multipart upload, aborted on any failure. With `expected`, a stream of another length is refused
   * (invalid_request) before anything is stored.
   */
  async function putInParts(
    key: string,
    body: Readable,
    contentType: string,
    expected: number | undefined,
  ): Promise<void> {
    const parts = readParts(body, partSize, expected)
    const first = await parts.next()
    const firstPart = first.done ? Buffer.alloc(0) : first.value
    const second = first.done ? first : await parts.next()
    if (second.done) {
      if (expected !== undefined && firstPart.length !== expected) throw lengthMismatch(firstPart.length, expected)
      await send(() =>
        client.send(
          new PutObjectCommand({
            Bucket,
            Key: key,
            Body: firstPart,
            ContentType: contentType,
            ContentLength: firstPart.length,
          }),
        ),
      )
      return
    }
    const { UploadId } = await send(() =>
      client.send(new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType: contentType })),
    )
    if (!UploadId)
      throw new AppError('service_unavailable', 'Object storage did not start a multipart upload', {
        storageError: 'NoUploadId',
      })
    try {
      const done: CompletedPart[] = []
      const upload = async (part: Buffer) => {
        const PartNumber = done.length + 1
        const { ETag } = await send(() =>
          client.send(
            new UploadPartCommand({ Bucket, Key: key, UploadId, PartNumber, Body: part, ContentLength: part.length }),
          ),
        )
        done.push({ ETag, PartNumber })
      }
      let total = firstPart.length + second.value.length
      await upload(firstPart)
      await upload(second.value)
      for await (const part of parts) {
        total += part.length
        await upload(part)
      }
      if (expected !== undefined && total !== expected) throw lengthMismatch(total, expected)
      await send(() =>
        client.send(
          new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: done } }),
        ),
      )
    } catch (err) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId })).catch(() => {})
      throw err
    }
  }

  return {
    kind: 's3',
    // The store serves presigned PUTs itself and overwrites. A conditional write (`If-None-Match: *`, which
    // AWS, R2 and MinIO honour) binds a presigned URL only if signed in, and then every client must send
    // that header; core-api's client sends only Content-Type. Single use is built on `copy` instead.
    exclusiveUploads: false,
    bucket: Bucket,

    async presignPut(key, { contentType, sizeBytes, expiresIn }) {
      checkSize(sizeBytes)
      const command = new PutObjectCommand({
        Bucket,
        Key: checkKey(key),
        ContentType: checkContentType(contentType),
        ContentLength: sizeBytes,
      })
      return getSignedUrl(presigner, command, {
        expiresIn: checkExpiresIn(expiresIn),
        signingDate: new Date(clock.now()),
        signableHeaders: new Set(['content-type', 'content-length']),
      })
    },

    async presignGet(key, { expiresIn, filename, contentType }) {
      const command = new GetObjectCommand({
        Bucket,
        Key: checkKey(key),
        ResponseContentDisposition: filename === undefined ? undefined : contentDisposition(checkFilename(filename)),
        ResponseContentType: contentType === undefined ? undefined : checkContentType(contentType),
      })
      return getSignedUrl(presigner, command, {
        expiresIn: checkExpiresIn(expiresIn),
        signingDate: new Date(clock.now()),
      })
    },

    async put(key, body, { contentType, sizeBytes }) {
      checkKey(key)
      const ContentType = checkContentType(contentType)
      if (sizeBytes !== undefined) checkSize(sizeBytes)
      if (Buffer.isBuffer(body)) {
        if (sizeBytes !== undefined && body.length !== sizeBytes) throw lengthMismatch(body.length, sizeBytes)
        await send(() =>
          client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType, ContentLength: body.length })),
        )
      } else {
        await putInParts(key, body, ContentType, sizeBytes)
      }
    },

    async get(key) {
      checkKey(key)
      try {
        const { Body } = await client.send(new GetObjectCommand({ Bucket, Key: key }))
        if (!Body) return null
        return Body instanceof Readable ? Body : Readable.fromWeb(Body.transformToWebStream() as never)
      } catch (err) {
        if (isMissing(err)) return null
        throw storageError(err)
      }
    },

    async head(key) {
      checkKey(key)
      try {
        const found = await client.send(new HeadObjectCommand({ Bucket, Key: key }))
        return { sizeBytes: found.ContentLength ?? 0, contentType: found.ContentType ?? null }
      } catch (err) {
        if (isMissing(err)) return null
        throw storageError(err)
      }
    },

    async delete(key) {
      checkKey(key)
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }))
      } catch (err) {
        if (!isMissing(err)) throw storageError(err)
      }
    },

    async copy(from, to) {
      if (checkKey(from) === checkKey(to))
        throw new AppError('invalid_request', 'An object cannot be copied onto itself')
      // CopySource is URL-encoded (segment by segment: the slashes stay); one request up to 5 GB, past Plinth's 100 MB.
      const CopySource = `${Bucket}/${from.split('/').map(encodeURIComponent).join('/')}`
      try {
        await client.send(new CopyObjectCommand({ Bucket, Key: to, CopySource, MetadataDirective: 'COPY' }))
        return true
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return false
        throw storageError(err)
      }
    },

    async list(prefix, limit) {
      checkPrefix(prefix)
      checkListLimit(limit)
      // ListObjects (v1) paged by Marker: every S3-compatible store has it (s3rver's v2 paging needs DES,
      // which OpenSSL 3 dropped), and without a delimiter the next marker is simply the last key.
      const keys: string[] = []
      let Marker: string | undefined
      for (;;) {
        const page = await send(() =>
          client.send(
            new ListObjectsCommand({ Bucket, Prefix: prefix || undefined, MaxKeys: limit - keys.length, Marker }),
          ),
        )
        for (const item of page.Contents ?? []) if (item.Key !== undefined && keys.length < limit) keys.push(item.Key)
        Marker = page.NextMarker ?? keys.at(-1)
        if (!page.IsTruncated || keys.length >= limit || !page.Contents?.length) return keys
      }
    },

    async close() {
      if (options.onClose) options.onClose()
      else client.destroy()
    },
  }
}

/** Whole parts of `size` bytes from a stream (the last one shorter), one in memory at a time; fails past `limit` bytes. */
async function* readParts(body: Readable, size: number, limit: number | undefined): AsyncGenerator<Buffer> {
  let chunks: Buffer[] = []
  let held = 0
  let seen = 0
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    seen += bytes.length
    if (limit !== undefined && seen > limit) throw lengthMismatch(seen, limit)
    while (held + bytes.length >= size) {
      const take = size - held
      chunks.push(bytes.subarray(0, take))
      yield Buffer.concat(chunks, size)
      bytes = bytes.subarray(take)
      chunks = []
      held = 0
    }
    if (bytes.length > 0) {
      chunks.push(bytes)
      held += bytes.length
    }
  }
  if (held > 0) yield Buffer.concat(chunks, held)
}

function lengthMismatch(actual: number, expected: number): AppError {
  const told =
    actual > expected ? `longer than sizeBytes (${expected})` : `${actual} bytes; it must be exactly ${expected}`
  return new AppError('invalid_request', `The body is ${told}`, { expected })
}

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } }
  // A missing bucket is a misconfigured store, not a missing object.
  if (e.name === 'NoSuchBucket') return false
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404
}

/**
 * A store failure as service_unavailable naming the store's error. The SDK's error drags the whole signed
 * request and response along; only its name and message are kept (as the logged cause).
 */
function defaultStorageError(err: unknown): AppError {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } }
  const name = e.code ?? e.name ?? 'Error'
  const status = e.$metadata?.httpStatusCode ?? null
  const cause = new Error(`${name}: ${e.message ?? ''}`.slice(0, 500))
  return new AppError(
    'service_unavailable',
    `Object storage refused the request (${name})`,
    { storageError: name, status },
    { cause },
  )
}
