import { request as httpRequest } from 'node:http'
import { CreateBucketCommand, ListObjectsCommand, S3Client } from '@aws-sdk/client-s3'
import { expect } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { tableResolver } from '../../src/lib/outbound/test-servers.js'
import type { ObjectStorage } from '../../src/lib/storage/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { startS3Store, type TestS3Store } from '../support/s3-store.js'
import { uniqueName } from './collections-support.js'
import { FILES, form, postForm } from './files-support.js'

/**
 * Shared steps of the tests of containers on storage connections: one S3 store (s3rver) with the buckets
 * `box` and `other`, reached the way flows' s3_action tests reach it: virtual-host style as
 * `<bucket>.s3.test.amazonaws.com`, names the test resolver answers with 127.0.0.1 and the address rule
 * is narrowed to let through. `evil.test` also resolves to 127.0.0.1 and is refused, as any private address.
 */
export const S3_HOST = 's3.test.amazonaws.com'
export const EVIL_HOST = 'evil.test'

export interface StorageWorld {
  store: TestS3Store
  direct: S3Client
  server: TestServer
  /** The connection's endpoint: the store, by a made-up name the address rule lets through. */
  endpoint: string
  stop(): Promise<void>
}

/** The store, a client reading it directly, and a server whose outbound rule lets the store's names through. */
export async function startStorageWorld(
  options: { filesStorage?: (storage: ObjectStorage) => ObjectStorage } = {},
): Promise<StorageWorld> {
  const store = await startS3Store('box')
  const direct = new S3Client({
    endpoint: store.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: store.credentials,
  })
  await direct.send(new CreateBucketCommand({ Bucket: 'other' }))
  const resolve = tableResolver({
    [`box.${S3_HOST}`]: ['127.0.0.1'],
    [`other.${S3_HOST}`]: ['127.0.0.1'],
    [`no-such-bucket.${S3_HOST}`]: ['127.0.0.1'],
    [EVIL_HOST]: ['127.0.0.1'],
  })
  const server = await startServer(
    {},
    {
      ...options,
      outbound: { resolve, isBlocked: (address, host) => !host.endsWith(`.${S3_HOST}`) && isBlockedAddress(address) },
    },
  )
  const port = new URL(store.endpoint).port
  return {
    store,
    direct,
    server,
    endpoint: `http://${S3_HOST}:${port}`,
    async stop() {
      await server.stop()
      direct.destroy()
      await store.stop()
    },
  }
}

/** The keys of a bucket under `prefix`, read straight from the store. */
export async function bucketKeys(world: StorageWorld, bucket: string, prefix = ''): Promise<string[]> {
  const listed = await world.direct.send(new ListObjectsCommand({ Bucket: bucket, Prefix: prefix || undefined }))
  return (listed.Contents ?? []).map((o) => o.Key ?? '').sort()
}

/** A storage connection to the world's store, as `token` in the project of `headers`; answers its id. */
export async function connection(
  world: StorageWorld,
  token: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<string> {
  const reply = await world.server.request('POST', '/api/v1/storage-connections', {
    token,
    headers,
    body: {
      label: uniqueName('conn'),
      provider: 'minio',
      endpoint: world.endpoint,
      bucketName: 'box',
      accessKeyId: world.store.credentials.accessKeyId,
      secretKey: world.store.credentials.secretAccessKey,
      ...body,
    },
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id
}

/** A container, as `token` in the project of `headers`; answers it. */
export async function container(
  world: StorageWorld,
  token: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<any> {
  const reply = await world.server.request('POST', '/api/v1/containers', {
    token,
    headers,
    body: { name: uniqueName('box'), ...body },
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

/** The proxy upload into a container (its field first, as a browser's FormData sends it). */
export function uploadInto(
  world: StorageWorld,
  token: string,
  containerId: string,
  file: { bytes: Uint8Array; type: string; filename: string },
): Promise<Reply> {
  return postForm(world.server, `${FILES}/upload`, token, form({ container_id: containerId }, file))
}

/**
 * A request to a URL on the store's made-up names (a presigned URL), connecting to 127.0.0.1 with the
 * URL's own Host header, as a client resolving the name would.
 */
export function storeRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<{ status: number; bytes: Buffer; type: string | null }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: init.method ?? 'GET',
        headers: { ...init.headers, ...(init.body ? { 'content-length': String(init.body.length) } : {}) },
        lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
          options.all
            ? callback(null, [{ address: '127.0.0.1', family: 4 }])
            : callback(null, '127.0.0.1', 4)) as never,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            bytes: Buffer.concat(chunks),
            type: (res.headers['content-type'] as string | undefined) ?? null,
          }),
        )
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}

/**
 * A proxy upload into a container of `total` bytes, streamed with chunked encoding through node:http (no
 * Content-Length), so the answer is read even when the server stops reading early.
 */
export function streamedInto(server: TestServer, token: string, containerId: string, total: number): Promise<Reply> {
  const boundary = 'plinthContainerBoundary'
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${FILES}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: res.statusCode ?? 0,
          headers: new Headers(res.headers as Record<string, string>),
          text,
          body: JSON.parse(text),
        })
      })
    })
    req.on('error', (err) => {
      if (!req.writableEnded) return // the server answered and closed while we were still sending
      reject(err)
    })
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="container_id"\r\n\r\n${containerId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    )
    const chunk = Buffer.alloc(256 * 1024, 7)
    let sent = 0
    const pump = (): void => {
      while (sent < total && !req.destroyed) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!req.destroyed) req.end(`\r\n--${boundary}--\r\n`)
    }
    pump()
  })
}
