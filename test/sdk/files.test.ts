import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { openAsBlob } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  NotFoundError,
  PlinthError,
  ValidationError,
  type PlinthClient,
  type UploadProgress,
} from '../../packages/client/src/index.js'
import { image } from '../api/files-support.js'
import { startServer, type TestServer } from '../support/harness.js'
import { s3Settings, startS3Store, type TestS3Store } from '../support/s3-store.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { clientFor } from './realtime-support.js'

// The client's files part against a running server on local storage: the one-call presigned upload with
// progress (20 MB, read back byte for byte), sources of every kind, download URLs, image variants, and
// refusals as typed errors; then the same upload through an S3 store's own presigned URLs (s3rver behind
// a proxy that checks signatures as S3 does), where the length must be declared up front.

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

describe('files', () => {
  let server: TestServer
  let owner: Account
  let client: PlinthClient
  const scratch = mkdtempSync(join(tmpdir(), 'plinth-sdk-files-'))

  beforeAll(async () => {
    server = await startServer()
    owner = await signUpOwner(server)
    client = clientFor(server.url, owner.token)
  })
  afterAll(async () => {
    await server?.stop()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('uploads 20 MB in one call with progress up to the total; the file reads back byte-identical', async () => {
    const bytes = randomBytes(20 * 1024 * 1024)
    const progress: UploadProgress[] = []
    const file = await client.files.upload(bytes, {
      filename: 'big.bin',
      visibility: 'private',
      onProgress: (p) => progress.push(p),
    })
    expect(file).toMatchObject({
      filename: 'big.bin',
      mimeType: 'application/octet-stream',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      status: 'complete',
      visibility: 'private',
      uploadedBy: owner.id,
    })
    // Many reports, never going back, ending exactly at the total.
    expect(progress.length).toBeGreaterThan(100)
    expect(progress.every((p) => p.total === bytes.length)).toBe(true)
    expect(progress.every((p, i) => i === 0 || p.loaded >= progress[i - 1]!.loaded)).toBe(true)
    expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length })

    const res = await client.files.download(file.id)
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    const back = new Uint8Array(await res.arrayBuffer())
    expect(back.length).toBe(bytes.length)
    expect(Buffer.compare(back, bytes)).toBe(0)
  })

  it('takes a File (name and type from it), a Blob on disk, a string and a stream of known size', async () => {
    const text = 'hello, plinth\n'.repeat(10_000)
    const named = await client.files.upload(new File([text], 'notes.txt', { type: 'text/plain' }))
    expect(named).toMatchObject({ filename: 'notes.txt', mimeType: 'text/plain', sizeBytes: text.length })

    const onDisk = join(scratch, 'disk.bin')
    const diskBytes = randomBytes(300_000)
    writeFileSync(onDisk, diskBytes)
    const seen: number[] = []
    const fromDisk = await client.files.upload(await openAsBlob(onDisk), {
      filename: 'disk.bin',
      onProgress: (p) => seen.push(p.loaded),
    })
    expect(fromDisk.sha256).toBe(sha256(diskBytes))
    expect(seen.at(-1)).toBe(diskBytes.length)

    const fromString = await client.files.upload('plain words', { filename: 'w.txt', contentType: 'text/plain' })
    expect(await (await client.files.download(fromString.id)).text()).toBe('plain words')

    const chunks = [randomBytes(70_000), randomBytes(5), randomBytes(130_000)]
    const all = Buffer.concat(chunks)
    const streamed = await client.files.upload(
      { stream: ReadableStream.from(chunks), size: all.length },
      { filename: 'stream.bin' },
    )
    expect(streamed.sha256).toBe(sha256(all))
    expect(Buffer.compare(new Uint8Array(await (await client.files.download(streamed.id)).arrayBuffer()), all)).toBe(0)
  })

  it('download URLs and variants: the thumbnail is made, served by name, and a missing size falls back', async () => {
    const png = await image('png', 900, 600)
    const file = await client.files.upload(new Blob([png], { type: 'image/png' }), { filename: 'photo.png' })
    const ready = await client.files.waitForVariants(file.id, { intervalMs: 50 })
    expect(ready.variantStatus).toBe('ready')
    expect(Object.keys(ready.variants).sort()).toEqual(['medium', 'small', 'thumbnail'])

    const link = await client.files.downloadUrl(file.id, { variant: 'thumbnail' })
    expect(link.variant).toBe('thumbnail')
    expect(link.expiresAt.getTime()).toBeGreaterThan(Date.now())
    const thumb = await sharp(Buffer.from(await (await fetch(link.url)).arrayBuffer())).metadata()
    expect(Math.max(thumb.width!, thumb.height!)).toBe(200)

    const fallback = await client.files.downloadUrl(file.id, { variant: 'huge' })
    expect(fallback.variant).toBeNull()
    const original = Buffer.from(await (await client.files.download(file.id, { variant: 'huge' })).arrayBuffer())
    expect(Buffer.compare(original, png)).toBe(0)

    const preview = await image('jpeg', 64, 32)
    const withPreview = await client.files.attachVariant(
      file.id,
      'preview',
      new Blob([preview], { type: 'image/jpeg' }),
    )
    expect(withPreview.variants.preview).toMatchObject({ source: 'client', width: 64, height: 32 })
    const regenerated = await client.files.regenerate(file.id)
    expect(regenerated).toMatchObject({ status: 'regenerated', file: { variants: { preview: { source: 'client' } } } })
  })

  it('refusals are typed errors carrying the code and details; a short stream stores nothing', async () => {
    const tooLarge = client.files.upload(
      { stream: ReadableStream.from([]), size: 200 * 1024 * 1024 },
      {
        filename: 'huge.bin',
      },
    )
    await expect(tooLarge).rejects.toBeInstanceOf(ValidationError)
    await expect(tooLarge).rejects.toMatchObject({ status: 400, code: 'limit_exceeded' })

    const missing = client.files.get('0'.repeat(32))
    await expect(missing).rejects.toBeInstanceOf(NotFoundError)
    await expect(client.files.downloadUrl('0'.repeat(32))).rejects.toMatchObject({ status: 404, code: 'not_found' })

    const anonymous = clientFor(server.url)
    await expect(anonymous.files.upload('x', { filename: 'x.txt' })).rejects.toMatchObject({
      status: 401,
      code: 'unauthorized',
    })

    // The stream ends before the size it announced: the PUT fails, and nothing is confirmed.
    const before = (await client.files.list({ limit: 100 })).total
    const short = client.files.upload(
      { stream: ReadableStream.from([randomBytes(10)]), size: 20 },
      {
        filename: 'short.bin',
      },
    )
    await expect(short).rejects.toBeInstanceOf(PlinthError)
    expect((await client.files.list({ limit: 100 })).total).toBe(before)
  })
})

describe('files on S3 (the store serves the presigned URLs)', () => {
  let store: TestS3Store
  let server: TestServer
  let client: PlinthClient

  beforeAll(async () => {
    store = await startS3Store()
    server = await startServer(s3Settings(store))
    const owner = await signUpOwner(server)
    client = clientFor(server.url, owner.token)
  })
  afterAll(async () => {
    await server?.stop()
    await store?.stop()
  })

  it('uploads with progress through the signed URL and reads back byte-identical', async () => {
    const bytes = randomBytes(6 * 1024 * 1024)
    const progress: UploadProgress[] = []
    const file = await client.files.upload(bytes, { filename: 's3.bin', onProgress: (p) => progress.push(p) })
    expect(file).toMatchObject({ status: 'complete', sizeBytes: bytes.length, sha256: sha256(bytes) })
    expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length })
    const link = await client.files.downloadUrl(file.id)
    expect(new URL(link.url).origin).toBe(new URL(store.endpoint).origin)
    const back = Buffer.from(await (await client.files.download(file.id)).arrayBuffer())
    expect(Buffer.compare(back, bytes)).toBe(0)
    expect(store.refused).toBe(0)
  })
})
