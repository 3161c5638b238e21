import type { Readable } from 'node:stream'
import type { OutboundSockets } from '../../lib/outbound/index.js'
import { createS3Client, describeFailure, type ProbeResult, type S3Target } from './probe.js'

/** One object as a listing or a head shows it. */
export interface BucketObject {
  key: string
  sizeBytes: number
  etag: string | null
  lastModified: string | null
}

/** Why an operation on a connection's bucket failed: the probe's reason words, or `not_found` / `too_large`. */
export class BucketError extends Error {
  constructor(
    readonly reason: Exclude<ProbeResult, { success: true }>['reason'] | 'not_found' | 'too_large',
    message: string,
    readonly remoteStatus: number | null = null,
    readonly remoteCode: string | null = null,
  ) {
    super(message)
    this.name = 'BucketError'
  }
}

/** The five actions of flows' s3_action on a connection's bucket. */
export interface Bucket {
  put(key: string, body: Buffer, contentType: string): Promise<{ etag: string | null }>
  /** The object's bytes (at most `maxBytes`). Throws BucketError not_found, too_large. */
  get(
    key: string,
    maxBytes: number,
  ): Promise<{ body: Buffer; contentType: string | null; etag: string | null; lastModified: string | null }>
  delete(key: string): Promise<void>
  list(prefix: string, maxKeys: number): Promise<{ objects: BucketObject[]; truncated: boolean }>
  /** Null when there is no such object. */
  head(key: string): Promise<(BucketObject & { contentType: string | null }) | null>
  close(): void
}

export interface BucketOptions {
  /** lib/outbound's rule for clients with their own sockets (the run's OutboundClient.sockets()). */
  sockets: OutboundSockets
  connectTimeoutMs?: number
  timeoutMs?: number
  signal?: AbortSignal
}

/**
 * The bucket of a connection, reached with the AWS SDK under lib/outbound's address rule: an endpoint
 * whose host is a refused literal or loopback name is refused before anything is sent, and a name is
 * resolved by the guarded lookup, so one resolving to a private address is refused at connect (the
 * connection test's rule). Failures are BucketErrors carrying the probe's reason words and the store's
 * status and code, never the SDK's text.
 */
export async function openBucket(target: S3Target, options: BucketOptions): Promise<Bucket> {
  const url = new URL(target.endpoint)
  if (options.sockets.refusesHost(url.hostname))
    throw failed(describeFailure(Object.assign(new Error('refused'), { code: 'PLINTH_BLOCKED_ADDRESS' })))
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  const timeoutMs = options.timeoutMs ?? 30_000
  const sdk = await import('@aws-sdk/client-s3')
  const { client, close } = await createS3Client(target, {
    lookup: options.sockets.lookup,
    connectTimeoutMs,
    timeoutMs,
  })
  const Bucket = target.bucketName
  const abortSignal = options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(connectTimeoutMs + timeoutMs)])
    : AbortSignal.timeout(connectTimeoutMs + timeoutMs)
  const send = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run()
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } }
      if (
        e.name === 'NoSuchKey' ||
        e.name === 'NotFound' ||
        (e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket')
      )
        throw new BucketError('not_found', 'No object has this key', 404, e.name ?? null)
      throw failed(describeFailure(err))
    }
  }
  return {
    async put(key, body, contentType) {
      const out = await send(() =>
        client.send(
          new sdk.PutObjectCommand({
            Bucket,
            Key: key,
            Body: body,
            ContentType: contentType,
            ContentLength: body.length,
          }),
          { abortSignal },
        ),
      )
      return { etag: out.ETag ?? null }
    },
    async get(key, maxBytes) {
      const out = await send(() => client.send(new sdk.GetObjectCommand({ Bucket, Key: key }), { abortSignal }))
      const stream = out.Body as Readable | undefined
      if (out.ContentLength !== undefined && out.ContentLength > maxBytes) {
        stream?.destroy()
        throw new BucketError('too_large', `The object is ${out.ContentLength} bytes; a flow reads at most ${maxBytes}`)
      }
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of (stream ?? []) as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > maxBytes) {
          stream?.destroy()
          throw new BucketError('too_large', `The object is larger than ${maxBytes} bytes`)
        }
        chunks.push(chunk)
      }
      return {
        body: Buffer.concat(chunks),
        contentType: out.ContentType ?? null,
        etag: out.ETag ?? null,
        lastModified: out.LastModified?.toISOString() ?? null,
      }
    },
    async delete(key) {
      await send(() => client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }), { abortSignal }))
    },
    async list(prefix, maxKeys) {
      const out = await send(() =>
        client.send(
          new sdk.ListObjectsV2Command({ Bucket, Prefix: prefix === '' ? undefined : prefix, MaxKeys: maxKeys }),
          { abortSignal },
        ),
      )
      const objects = (out.Contents ?? []).map((o) => ({
        key: o.Key ?? '',
        sizeBytes: o.Size ?? 0,
        etag: o.ETag ?? null,
        lastModified: o.LastModified?.toISOString() ?? null,
      }))
      return { objects, truncated: out.IsTruncated === true }
    },
    async head(key) {
      try {
        const out = await send(() => client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }), { abortSignal }))
        return {
          key,
          sizeBytes: out.ContentLength ?? 0,
          contentType: out.ContentType ?? null,
          etag: out.ETag ?? null,
          lastModified: out.LastModified?.toISOString() ?? null,
        }
      } catch (err) {
        if (err instanceof BucketError && err.reason === 'not_found') return null
        throw err
      }
    },
    close,
  }
}

function failed(result: ProbeResult): BucketError {
  if (result.success) return new BucketError('unexpected_response', 'The store answered unexpectedly')
  return new BucketError(result.reason, result.message, result.remoteStatus, result.remoteCode)
}
