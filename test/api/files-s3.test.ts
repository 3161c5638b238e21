import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { readAll, shiftableClock } from '../../src/lib/storage/contract.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { s3Settings, startS3Store, type TestS3Store } from '../support/s3-store.js'
import {
  dimensions,
  download,
  downloadVia,
  FILES,
  image,
  metadata,
  pollFile,
  sha256,
  someBytes,
  uploadViaProxy,
} from './files-support.js'

// The same file flows with S3_* set: upload URLs and download URLs are the store's own presigned URLs
// (s3rver behind a proxy that checks their signatures), and Plinth never sees the bytes of a token upload.

let store: TestS3Store
let server: TestServer
let alice: Account
const { clock, shift } = shiftableClock()

beforeAll(async () => {
  store = await startS3Store()
  server = await startServer(s3Settings(store), { clock })
  const owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
})
afterEach(() => shift(0))
afterAll(async () => {
  await server?.stop()
  await store?.stop()
})

describe('files on an S3-compatible store', () => {
  it('token upload to the store, confirm, variants, download from the store, delete', async () => {
    expect(server.app.storage.kind).toBe('s3')
    const jpeg = await image('jpeg', 640, 480)
    const token = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { filename: 'cat.jpg', mime_type: 'image/jpeg', size_bytes: jpeg.length },
    })
    expect(token.status, token.text).toBe(200)
    expect(token.body.uploadUrl.startsWith(store.endpoint)).toBe(true)
    const put = await fetch(token.body.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: jpeg,
    })
    expect(put.status, await put.text()).toBe(200)
    const id = token.body.id as string
    expect((await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })).status).toBe(200)

    const file = await pollFile(server, alice.token, id, (f) => f.variantStatus !== 'pending')
    expect(file).toMatchObject({ sha256: sha256(jpeg), variantStatus: 'ready' })
    const original = await downloadVia(server, alice.token, id)
    expect(original.bytes.equals(jpeg)).toBe(true)
    expect(await dimensions((await downloadVia(server, alice.token, id, 'thumbnail')).bytes)).toMatchObject({
      width: 200,
      height: 150,
    })

    const url = (await server.request('GET', `${FILES}/download-token/${id}`, { token: alice.token })).body
      .downloadUrl as string
    expect(url.startsWith(store.endpoint)).toBe(true)
    expect((await server.request('DELETE', `${FILES}/${id}`, { token: alice.token })).status).toBe(200)
    expect((await download(url)).status).toBe(404)
    expect(await server.app.storage.list(`projects/${server.app.defaultProject.id}/`, 100)).toEqual([])
    expect(store.refused).toBe(0)
  })

  it('a proxy upload streams through Plinth into the store', async () => {
    const bytes = someBytes(3 * 1024 * 1024)
    const reply = await uploadViaProxy(server, alice.token, bytes, { filename: 'blob.bin' })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data).toMatchObject({ sizeBytes: bytes.length, sha256: sha256(bytes) })
    expect((await downloadVia(server, alice.token, reply.body.data.id)).bytes.equals(bytes)).toBe(true)
  })

  // The store serves the upload URL and overwrites (s3rver, like S3 itself without a signed If-None-Match):
  // the PUT cannot be refused, but confirm served a copy no URL points at, so it changes nothing served.
  it('PUT "hello", confirm, PUT "EVIL!" to the same URL: downloads still return "hello", matching its SHA-256', async () => {
    const token = await server.request('POST', `${FILES}/upload-token`, {
      token: alice.token,
      body: { filename: 'note.txt', mime_type: 'text/plain', size_bytes: 5 },
    })
    expect(token.status, token.text).toBe(200)
    const { id, uploadUrl, r2Key: uploadKey } = token.body as { id: string; uploadUrl: string; r2Key: string }
    const put = (body: string) =>
      fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body }).then(
        async (r) => (await r.arrayBuffer(), r.status),
      )
    expect(await put('hello')).toBe(200)
    expect((await server.request('POST', `${FILES}/confirm-upload/${id}`, { token: alice.token })).status).toBe(200)

    expect(await put('EVIL!')).toBe(200)
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('hello')
    const file = await metadata(server, alice.token, id)
    expect(file).toMatchObject({ status: 'complete', sha256: sha256(Buffer.from('hello')) })
    expect(file.r2Key).not.toBe(uploadKey)
    // The bytes sent again sit at the URL's own key only, which the sweep removes once the URL is dead.
    expect((await readAll(await server.app.storage.get(uploadKey))).toString()).toBe('EVIL!')
    await server.app.files.sweep()
    expect(await server.app.storage.head(uploadKey)).not.toBeNull()
    shift(17 * 60_000 + 2000)
    await server.app.files.sweep()
    expect(await server.app.storage.head(uploadKey)).toBeNull()
    expect((await downloadVia(server, alice.token, id)).bytes.toString()).toBe('hello')
    expect(store.refused).toBe(0)
  })
})
