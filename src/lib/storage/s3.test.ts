import { randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../../../test/support/harness.js'
import { s3Settings, startS3Store, type TestS3Store } from '../../../test/support/s3-store.js'
import { readAll, runStorageContract, shiftableClock } from './contract.js'
import { createS3Storage, type S3Storage } from './s3.js'

// Against s3rver behind a proxy that verifies presigned signatures as S3, R2 and MinIO do (see s3-store.ts).
runStorageContract('s3', async () => {
  const store = await startS3Store()
  const { clock, shift } = shiftableClock()
  const storage = createS3Storage({
    endpoint: store.endpoint,
    bucket: store.bucket,
    ...store.credentials,
    region: 'auto',
    clock,
    partSizeBytes: 5 * 1024 * 1024,
  })
  return {
    storage,
    shiftClock: shift,
    async close() {
      await storage.close()
      await store.stop()
    },
  }
})

describe('S3 driver specifics', () => {
  let store: TestS3Store
  let storage: S3Storage

  beforeAll(async () => {
    store = await startS3Store()
    storage = createS3Storage({ endpoint: store.endpoint, bucket: store.bucket, ...store.credentials, region: 'auto' })
  })
  afterAll(async () => {
    await storage.close()
    await store.stop()
  })

  it('signs Content-Type and Content-Length into an upload URL, so the store itself refuses another body', async () => {
    const url = new URL(
      await storage.presignPut('projects/p/a.png', { contentType: 'image/png', sizeBytes: 10, expiresIn: 120 }),
    )
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
      expect.arrayContaining(['content-length', 'content-type', 'host']),
    )
    expect(url.searchParams.get('X-Amz-Expires')).toBe('120')
    expect(url.pathname).toBe(`/${store.bucket}/projects/p/a.png`)
    const before = store.refused
    const put = await fetch(url, { method: 'PUT', body: 'x'.repeat(11), headers: { 'content-type': 'image/png' } })
    expect(put.status).toBe(403)
    expect(await put.text()).toContain('SignatureDoesNotMatch')
    expect(store.refused).toBe(before + 1)
  })

  it('signs presigned URLs for S3_PUBLIC_ENDPOINT when clients reach the store by another name', async () => {
    // The same store under a name only "clients" use; the host is part of the signature.
    const publicEndpoint = store.endpoint.replace('127.0.0.1', 'localhost')
    expect(publicEndpoint).not.toBe(store.endpoint)
    const split = createS3Storage({
      endpoint: store.endpoint,
      publicEndpoint,
      bucket: store.bucket,
      ...store.credentials,
      region: 'auto',
    })
    try {
      const body = randomBytes(64)
      const opts = { contentType: 'application/octet-stream', sizeBytes: body.length, expiresIn: 120 }
      const upload = new URL(await split.presignPut('projects/p/public.bin', opts))
      expect(upload.origin).toBe(new URL(publicEndpoint).origin)
      const put = await fetch(upload, { method: 'PUT', body, headers: { 'content-type': opts.contentType } })
      expect(put.status).toBe(200)
      // The server's own calls still go to S3_ENDPOINT, and read what the client uploaded.
      expect((await readAll(await split.get('projects/p/public.bin'))).equals(body)).toBe(true)
      const download = new URL(await split.presignGet('projects/p/public.bin', { expiresIn: 60 }))
      expect(download.origin).toBe(new URL(publicEndpoint).origin)
      expect(Buffer.from(await (await fetch(download)).arrayBuffer()).equals(body)).toBe(true)
      // Without it, a URL signed for the internal name does not work under the public one.
      const internal = new URL(await storage.presignGet('projects/p/public.bin', { expiresIn: 60 }))
      internal.host = download.host
      expect((await fetch(internal)).status).toBe(403)
    } finally {
      await split.close()
    }
  })

  it('puts the download file name in the signed response-content-disposition', async () => {
    const url = new URL(
      await storage.presignGet('projects/p/a.png', { expiresIn: 300, filename: 'report "final".pdf' }),
    )
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300')
    expect(url.searchParams.get('response-content-disposition')).toBe(
      `attachment; filename="report _final_.pdf"; filename*=UTF-8''report%20%22final%22.pdf`,
    )
  })

  it('reports a store refusal as service_unavailable naming its error, never the secret', async () => {
    const secretAccessKey = `secret-${randomBytes(8).toString('hex')}`
    const wrong = createS3Storage({
      endpoint: store.endpoint,
      bucket: store.bucket,
      accessKeyId: 'NOBODY',
      secretAccessKey,
      region: 'auto',
    })
    try {
      const err = await wrong.list('', 1).then(
        () => null,
        (e: unknown) => e,
      )
      expect(err).toMatchObject({
        code: 'service_unavailable',
        details: { storageError: 'InvalidAccessKeyId', status: 403 },
      })
      expect(JSON.stringify(err)).not.toContain(secretAccessKey)
      expect((err as Error).message).not.toContain(secretAccessKey)
      // What gets logged (the error and its cause) carries no signed request either.
      expect(inspect(err, { depth: 20 })).not.toMatch(/authorization|Signature=|Credential=/i)
    } finally {
      await wrong.close()
    }
    const noBucket = createS3Storage({
      endpoint: store.endpoint,
      bucket: 'no-such-bucket',
      ...store.credentials,
      region: 'auto',
    })
    try {
      await expect(noBucket.list('', 1)).rejects.toMatchObject({
        code: 'service_unavailable',
        details: { storageError: 'NoSuchBucket' },
      })
    } finally {
      await noBucket.close()
    }
  })

  it('reports an unreachable store as service_unavailable', async () => {
    const down = createS3Storage({
      endpoint: 'http://127.0.0.1:1',
      bucket: 'b',
      accessKeyId: 'a',
      secretAccessKey: 'b',
      region: 'auto',
    })
    try {
      await expect(down.head('projects/p/x')).rejects.toMatchObject({ code: 'service_unavailable' })
    } finally {
      await down.close()
    }
  })
})

describe('Plinth with S3_* settings', () => {
  let store: TestS3Store
  let server: TestServer

  beforeAll(async () => {
    store = await startS3Store()
    server = await startServer(s3Settings(store))
  })
  afterAll(async () => {
    await server?.stop()
    await store?.stop()
  })

  it('keeps files in the bucket and reports s3 on /health', async () => {
    expect(server.app.storage.kind).toBe('s3')
    const health = await server.request('GET', '/health')
    expect(health.body.storage).toBe('s3')
    const key = 'projects/p/hello.txt'
    const url = await server.app.storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 5, expiresIn: 120 })
    expect(url.startsWith(`${store.endpoint}/${store.bucket}/`)).toBe(true)
    expect((await fetch(url, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } })).status).toBe(
      200,
    )
    expect((await readAll(await server.app.storage.get(key))).toString()).toBe('hello')
  })

  it('serves no local object route: the store serves its own URLs', async () => {
    const reply = await server.request('GET', '/api/v1/storage/object?key=projects%2Fp%2Fhello.txt')
    expect(reply.status).toBe(404)
  })

  it('never writes the S3 secret to the log', async () => {
    await server.app.storage.list('', 5)
    await server.request('GET', '/health')
    expect(server.logs.length).toBeGreaterThan(0)
    expect(server.logs.join('\n')).not.toContain(store.credentials.secretAccessKey)
  })
})
