import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStorage } from '../../src/lib/storage/index.js'
import type { FileUploadEvent } from '../../src/modules/files/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import {
  dimensions,
  download,
  downloadVia,
  FILES,
  form,
  image,
  metadata,
  pollFile,
  postForm,
  sha256,
  someBytes,
  startServerWith,
  uploadViaProxy,
  uploadViaToken,
} from './files-support.js'

// Bytes that stream through Plinth: replace (POST /:id/replace) and the proxy upload (POST /upload), both
// multipart and bounded at about 95 MB, well past the 10 MB JSON body limit. Storage faults are injected
// through the app's files storage wrapper.

const ready = (file: Record<string, any>) => file.variantStatus === 'ready' || file.variantStatus === 'failed'
const replace = (
  server: TestServer,
  id: string,
  token: string | undefined,
  bytes: Uint8Array,
  type = 'application/octet-stream',
  filename = 'new.bin',
) => postForm(server, `${FILES}/${id}/replace`, token, form({}, { filename, type, bytes }))

/** Keys stored under a prefix, seen by the storage itself. */
const keysUnder = (server: TestServer, prefix: string) => server.app.storage.list(prefix, 1000)

/**
 * A POST of `total` bytes of one multipart file part, streamed with chunked encoding (no Content-Length),
 * through node:http so the answer is read even when the server stops reading early.
 */
function streamedUpload(server: TestServer, path: string, token: string, total: number): Promise<Reply> {
  const boundary = 'plinthStreamBoundary'
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, {
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
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    )
    const chunk = Buffer.alloc(1024 * 1024, 7)
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

describe('replace and the proxy upload', () => {
  let server: TestServer
  let owner: Account
  let admin: Account
  let alice: Account
  let bob: Account
  let vera: Account
  const uploads: FileUploadEvent[] = []
  let project: string

  beforeAll(async () => {
    server = await startServer()
    owner = await signUpOwner(server)
    admin = await createAccount(server, owner.token, { role: 'admin' })
    alice = await createAccount(server, owner.token, { role: 'editor' })
    bob = await createAccount(server, owner.token, { role: 'editor' })
    vera = await createAccount(server, owner.token, { role: 'viewer' })
    project = server.app.defaultProject.id
    server.app.events.on('file.upload', (event) => void uploads.push(event))
  })
  afterAll(async () => {
    await server?.stop()
  })

  describe('POST /api/v1/files/:id/replace', () => {
    it('keeps the id and filename; new size, type and SHA-256; old bytes and variants gone; new variants made', async () => {
      const jpeg = await image('jpeg', 400, 300)
      const id = await uploadViaToken(server, alice.token, jpeg, { filename: 'photo.jpg', mime: 'image/jpeg' })
      const before = await pollFile(server, alice.token, id, ready)
      expect(before.variantStatus).toBe('ready')
      const oldOriginal = (await server.request('GET', `${FILES}/download-token/${id}`, { token: alice.token })).body
        .downloadUrl
      const oldThumb = (
        await server.request('GET', `${FILES}/download-token/${id}?size=thumbnail`, { token: alice.token })
      ).body.downloadUrl

      const png = await image('png', 120, 240)
      const reply = await replace(server, id, alice.token, png, 'image/png', 'other-name.png')
      expect(reply.status, reply.text).toBe(200)
      const file = reply.body.data
      expect(file).toMatchObject({
        id,
        filename: 'photo.jpg',
        mimeType: 'image/png',
        sizeBytes: png.length,
        sha256: sha256(png),
        uploadedBy: alice.id,
        createdAt: before.createdAt,
      })
      expect(file.r2Key).not.toBe(before.r2Key)
      expect(file.r2Key.startsWith(`projects/${project}/files/${id}/`)).toBe(true)
      expect((await download(oldOriginal)).status).toBe(404)
      expect((await download(oldThumb)).status).toBe(404)
      expect((await downloadVia(server, bob.token, id)).bytes.equals(png)).toBe(true)

      const after = await pollFile(server, alice.token, id, ready)
      expect(after.variants.thumbnail).toMatchObject({ width: 100, height: 200, mimeType: 'image/png' })
      expect(await dimensions((await downloadVia(server, bob.token, id, 'thumbnail')).bytes)).toMatchObject({
        width: 100,
        height: 200,
        format: 'png',
      })
      // Exactly the new original and its three variants are stored for this file.
      expect(await keysUnder(server, `projects/${project}/files/${id}/`)).toEqual([file.r2Key])
      expect(await keysUnder(server, `projects/${project}/variants/${id}/`)).toHaveLength(3)
    })

    it("within the update grant's item_filter only: 403 for another editor, 404 for a hidden file; administrators may", async () => {
      const open = await uploadViaToken(server, alice.token, someBytes(10))
      const secret = await uploadViaToken(server, alice.token, someBytes(10), { visibility: 'private' })
      const refused = await replace(server, open, bob.token, someBytes(5))
      expect(refused.status, refused.text).toBe(403)
      expect(refused.body.error).toBe('forbidden')
      expect((await replace(server, open, vera.token, someBytes(5))).status).toBe(403)
      expect((await replace(server, secret, bob.token, someBytes(5))).status).toBe(404)
      expect((await replace(server, open, undefined, someBytes(5))).status).toBe(401)
      expect((await replace(server, 'f'.repeat(32), alice.token, someBytes(5))).status).toBe(404)
      expect((await metadata(server, alice.token, open)).sizeBytes).toBe(10)
      const byAdmin = await replace(server, secret, admin.token, someBytes(7))
      expect(byAdmin.status, byAdmin.text).toBe(200)
      expect(byAdmin.body.data).toMatchObject({ sizeBytes: 7, uploadedBy: alice.id, visibility: 'private' })
    })

    it('refuses an empty replacement and an upload never completed with 400 invalid_request, changing nothing', async () => {
      const bytes = someBytes(40)
      const id = await uploadViaToken(server, alice.token, bytes)
      const empty = await replace(server, id, alice.token, new Uint8Array(0))
      expect(empty.status, empty.text).toBe(400)
      expect(empty.body.error).toBe('invalid_request')
      expect(await metadata(server, alice.token, id)).toMatchObject({ sizeBytes: 40, sha256: sha256(bytes) })
      expect(await keysUnder(server, `projects/${project}/files/${id}/`)).toHaveLength(1)

      const pending = await uploadViaToken(server, alice.token, someBytes(40), { confirm: false })
      const never = await replace(server, pending, alice.token, someBytes(5))
      expect(never.status, never.text).toBe(400)
      expect(never.body.error).toBe('invalid_request')
    })

    it('refuses malformed bodies: no file part, another field, JSON, no boundary', async () => {
      const id = await uploadViaToken(server, alice.token, someBytes(40))
      const cases: [string, Parameters<typeof postForm>[3], number, string][] = [
        ['no file part', form({ note: 'x' }), 400, 'invalid_request'],
        [
          'a file in another field',
          form({}, { field: 'upload', filename: 'a', type: 'text/plain', bytes: Buffer.from('abc') }),
          400,
          'invalid_request',
        ],
        [
          'an extra field',
          form({ visibility: 'private' }, { filename: 'a', type: 'text/plain', bytes: Buffer.from('abc') }),
          400,
          'invalid_request',
        ],
        ['JSON', { raw: '{"file":"abc"}', type: 'application/json' }, 415, 'unsupported_media_type'],
        ['no boundary', { raw: 'abc', type: 'multipart/form-data' }, 400, 'invalid_request'],
        [
          'truncated',
          {
            raw: '--b\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
            type: 'multipart/form-data; boundary=b',
          },
          400,
          'invalid_request',
        ],
      ]
      for (const [name, body, status, code] of cases) {
        const reply = await postForm(server, `${FILES}/${id}/replace`, alice.token, body)
        expect(reply.status, `${name}: ${reply.text}`).toBe(status)
        expect(reply.body.error, name).toBe(code)
      }
      expect((await metadata(server, alice.token, id)).sizeBytes).toBe(40)
      expect(await keysUnder(server, `projects/${project}/files/${id}/`)).toHaveLength(1)
    })

    it('counts the project quota with the old size given back', async () => {
      const other = await server.request('POST', '/api/v1/projects', {
        token: owner.token,
        body: { name: 'Replace quota' },
      })
      const as = { token: owner.token, headers: { 'X-Project-Id': other.body.data.id } }
      expect(
        (await server.request('PATCH', '/api/v1/settings', { ...as, body: { 'files.quotaBytes': 100 } })).status,
      ).toBe(200)
      const token = await server.request('POST', `${FILES}/upload-token`, {
        ...as,
        body: { filename: 'a', mime_type: 'text/plain', size_bytes: 60 },
      })
      expect(
        (
          await fetch(token.body.uploadUrl, {
            method: 'PUT',
            headers: { 'content-type': 'text/plain' },
            body: 'x'.repeat(60),
          })
        ).status,
      ).toBe(200)
      expect((await server.request('POST', `${FILES}/confirm-upload/${token.body.id}`, as)).status).toBe(200)
      const path = `${FILES}/${token.body.id}/replace`
      const send = (size: number) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${owner.token}`, 'X-Project-Id': other.body.data.id },
          body: form({}, { filename: 'b', type: 'text/plain', bytes: Buffer.alloc(size, 1) }),
        })
      const over = await send(101)
      expect(over.status).toBe(400)
      expect(((await over.json()) as { error: string }).error).toBe('limit_exceeded')
      expect((await send(100)).status).toBe(200)
    })

    it('holds the quota under concurrent replacements; a file that lost the race keeps its bytes and lists no variants', async () => {
      const other = await server.request('POST', '/api/v1/projects', {
        token: owner.token,
        body: { name: 'Replace race' },
      })
      const projectId = other.body.data.id
      const as = { token: owner.token, headers: { 'X-Project-Id': projectId } }
      const post = (path: string, bytes: Uint8Array, type: string) =>
        fetch(`${server.url}${FILES}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${owner.token}`, 'X-Project-Id': projectId },
          body: form({}, { filename: 'f', type, bytes }),
        })
      const jpeg = await image('jpeg', 64, 64)
      const ids: string[] = []
      for (let i = 0; i < 4; i++) {
        const uploaded = await post('/upload', jpeg, 'image/jpeg')
        expect(uploaded.status).toBe(201)
        ids.push(((await uploaded.json()) as { data: { id: string } }).data.id)
      }
      const read = async (id: string) => (await server.request('GET', `${FILES}/${id}`, as)).body.data
      for (const id of ids) {
        for (let attempt = 0; !ready(await read(id)); attempt++) {
          expect(attempt).toBeLessThan(400)
          await new Promise((r) => setTimeout(r, 25))
        }
        expect((await read(id)).variantStatus).toBe('ready')
      }
      // Each replacement grows its file by 1000 bytes; the quota leaves room for two of them.
      expect(
        (
          await server.request('PATCH', '/api/v1/settings', {
            ...as,
            body: { 'files.quotaBytes': 4 * jpeg.length + 2500 },
          })
        ).status,
      ).toBe(200)
      const replies = await Promise.all(
        ids.map((id) => post(`/${id}/replace`, Buffer.alloc(jpeg.length + 1000, 1), 'application/octet-stream')),
      )
      expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 400, 400])
      for (const [i, reply] of replies.entries()) {
        const file = await read(ids[i]!)
        if (reply.status === 200) {
          expect(file.sizeBytes).toBe(jpeg.length + 1000)
          continue
        }
        expect(((await reply.json()) as { error: string }).error).toBe('limit_exceeded')
        // Its bytes are the old ones; the old variants may be gone, but the row never lists a missing object.
        expect(file).toMatchObject({ sizeBytes: jpeg.length, mimeType: 'image/jpeg' })
        const listed = Object.values(file.variants as Record<string, { r2Key: string }>).map((v) => v.r2Key)
        const stored = await keysUnder(server, `projects/${projectId}/variants/${ids[i]}/`)
        for (const key of listed) expect(stored).toContain(key)
      }
    })
  })

  describe('POST /api/v1/files/upload (proxy)', () => {
    it('stores, measures and confirms in one request; file.upload says so', async () => {
      const bytes = someBytes(12_345)
      const reply = await uploadViaProxy(server, alice.token, bytes, {
        filename: 'notes.txt',
        mime: 'text/plain',
        visibility: 'private',
      })
      expect(reply.status, reply.text).toBe(201)
      const file = reply.body.data
      expect(file).toMatchObject({
        filename: 'notes.txt',
        mimeType: 'text/plain',
        sizeBytes: bytes.length,
        sha256: sha256(bytes),
        uploadedBy: alice.id,
        visibility: 'private',
        status: 'complete',
        collectionName: '__system',
      })
      expect(await metadata(server, alice.token, file.id)).toEqual(file)
      expect((await server.request('GET', `${FILES}/${file.id}`, { token: bob.token })).status).toBe(404)
      expect((await downloadVia(server, alice.token, file.id)).bytes.equals(bytes)).toBe(true)
      await server.request('GET', FILES, { token: alice.token })
      expect(uploads.find((e) => e.file.id === file.id)).toMatchObject({
        via: 'proxy',
        principal: { id: alice.id, kind: 'user' },
      })
    })

    it('takes a 20 MB file through the proxy upload and replace, past the 10 MB JSON body limit', async () => {
      const bytes = someBytes(20 * 1024 * 1024)
      const reply = await uploadViaProxy(server, alice.token, bytes, { filename: 'big.bin' })
      expect(reply.status, reply.text).toBe(201)
      expect(reply.body.data).toMatchObject({ sizeBytes: bytes.length, sha256: sha256(bytes) })
      const replaced = await replace(server, reply.body.data.id, alice.token, bytes.subarray(0, 15 * 1024 * 1024))
      expect(replaced.status, replaced.text).toBe(200)
      expect(replaced.body.data.sizeBytes).toBe(15 * 1024 * 1024)
    })

    it('makes variants of an image in the background', async () => {
      const reply = await uploadViaProxy(server, alice.token, await image('jpeg', 300, 300), {
        filename: 'sq.jpg',
        mime: 'image/jpeg',
      })
      expect(reply.status, reply.text).toBe(201)
      const file = await pollFile(server, alice.token, reply.body.data.id, ready)
      expect(file.variants.thumbnail).toMatchObject({ width: 200, height: 200 })
    })

    it('refuses bad requests and leaves nothing stored', async () => {
      const before = await keysUnder(server, `projects/${project}/files/`)
      const small = { filename: 'a.txt', type: 'text/plain', bytes: Buffer.from('hello') }
      const cases: [string, string | undefined, Parameters<typeof postForm>[3], number, string][] = [
        ['anonymous', undefined, form({}, small), 401, 'unauthorized'],
        ['a viewer', vera.token, form({}, small), 403, 'forbidden'],
        ['no file', alice.token, form({ visibility: 'public' }), 400, 'invalid_request'],
        ['an empty file', alice.token, form({}, { ...small, bytes: new Uint8Array(0) }), 400, 'invalid_request'],
        ['a bad visibility', alice.token, form({ visibility: 'secret' }, small), 400, 'invalid_request'],
        ['an unknown collection', alice.token, form({ collection_name: 'nope' }, small), 400, 'invalid_request'],
        ['an unknown field', alice.token, form({ owner: 'me' }, small), 400, 'invalid_request'],
        ['JSON', alice.token, { raw: '{}', type: 'application/json' }, 415, 'unsupported_media_type'],
      ]
      for (const [name, token, body, status, code] of cases) {
        const reply = await postForm(server, `${FILES}/upload`, token, body)
        expect(reply.status, `${name}: ${reply.text}`).toBe(status)
        expect(reply.body.error, name).toBe(code)
      }
      expect(await keysUnder(server, `projects/${project}/files/`)).toEqual(before)
    })

    it('stops a body past about 95 MB while it streams (400 limit_exceeded) and keeps none of it', async () => {
      const before = await keysUnder(server, `projects/${project}/files/`)
      const reply = await streamedUpload(server, `${FILES}/upload`, alice.token, 96 * 1024 * 1024)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body).toMatchObject({ error: 'limit_exceeded', details: { limit: 95 * 1024 * 1024 } })
      expect(await keysUnder(server, `projects/${project}/files/`)).toEqual(before)
    })
  })
})

describe('storage refusing to remove objects', () => {
  let server: TestServer
  let owner: Account
  let alice: Account
  let failDeletes = false

  beforeAll(async () => {
    const faulty = (storage: ObjectStorage): ObjectStorage =>
      Object.assign(Object.create(storage) as ObjectStorage, {
        kind: storage.kind,
        async delete(key: string) {
          if (failDeletes && key.includes('/variants/')) throw new Error('storage unavailable')
          return storage.delete(key)
        },
      })
    server = await startServerWith({ filesStorage: faulty })
    owner = await signUpOwner(server)
    alice = await createAccount(server, owner.token, { role: 'editor' })
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('replace answers 503 service_unavailable and nothing changes when old variants cannot be removed', async () => {
    const jpeg = await image('jpeg', 300, 200)
    const id = await uploadViaToken(server, alice.token, jpeg, { filename: 'keep.jpg', mime: 'image/jpeg' })
    const before = await pollFile(server, alice.token, id, ready)
    expect(before.variantStatus).toBe('ready')
    const project = server.app.defaultProject.id
    failDeletes = true
    try {
      const reply = await replace(server, id, alice.token, await image('png', 50, 50), 'image/png')
      expect(reply.status, reply.text).toBe(503)
      expect(reply.body.error).toBe('service_unavailable')
      expect(await metadata(server, alice.token, id)).toEqual(before)
      expect((await downloadVia(server, alice.token, id)).bytes.equals(jpeg)).toBe(true)
      expect((await downloadVia(server, alice.token, id, 'thumbnail')).variant).toBe('thumbnail')
      // The replacement's bytes did not stay behind.
      expect(await server.app.storage.list(`projects/${project}/files/${id}/`, 10)).toEqual([before.r2Key])

      // Delete refuses the same way: the file stays listed, to be deleted again later.
      const deleted = await server.request('DELETE', `${FILES}/${id}`, { token: alice.token })
      expect(deleted.status, deleted.text).toBe(503)
      expect((await server.request('GET', `${FILES}/${id}`, { token: alice.token })).status).toBe(200)
    } finally {
      failDeletes = false
    }
    const replaced = await replace(server, id, alice.token, await image('png', 50, 50), 'image/png')
    expect(replaced.status, replaced.text).toBe(200)
    expect((await server.request('DELETE', `${FILES}/${id}`, { token: alice.token })).status).toBe(200)
  })
})
