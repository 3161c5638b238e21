import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock, type Clock } from '../clock.js'
import type { ObjectStorage } from './types.js'

/** One driver under test, set up against a real peer (a Plinth server for local, an S3 store for s3). */
export interface StorageFixture {
  readonly storage: ObjectStorage
  /** Moves the clock the driver signs URLs with by `offsetMs` from real time (0 puts it back); the peer keeps real time. */
  shiftClock(offsetMs: number): void
  close(): Promise<void>
}

/**
 * The behaviour every ObjectStorage driver shares, over real HTTP against a real peer. Run by
 * local.test.ts and s3.test.ts: a driver that passes here can stand in for the other.
 */
export function runStorageContract(name: string, setup: () => Promise<StorageFixture>): void {
  describe(`object storage contract: ${name}`, () => {
    let fixture: StorageFixture
    let storage: ObjectStorage
    let n = 0
    const freshKey = (name = 'object.bin') => `projects/contract/${++n}-${randomBytes(4).toString('hex')}/${name}`

    beforeAll(async () => {
      fixture = await setup()
      storage = fixture.storage
    })
    afterAll(async () => {
      fixture.shiftClock(0)
      await fixture.close()
    })

    describe('put, get, head, delete', () => {
      it('stores a buffer and gives back the same bytes, size and type', async () => {
        const key = freshKey('hello.txt')
        await storage.put(key, Buffer.from('hello, world'), { contentType: 'text/plain' })
        expect(await storage.head(key)).toEqual({ sizeBytes: 12, contentType: 'text/plain' })
        expect((await readAll(await storage.get(key))).toString()).toBe('hello, world')
      })

      it('stores a stream of known length', async () => {
        const key = freshKey()
        const bytes = randomBytes(300_000)
        await storage.put(key, Readable.from(chunks(bytes, 65_536)), { contentType: 'application/octet-stream', sizeBytes: bytes.length })
        expect(await storage.head(key)).toEqual({ sizeBytes: bytes.length, contentType: 'application/octet-stream' })
        expect(sha256(await readAll(await storage.get(key)))).toBe(sha256(bytes))
      })

      it('stores a stream of unknown length larger than one upload part', async () => {
        const key = freshKey()
        const bytes = randomBytes(11 * 1024 * 1024 + 123)
        await storage.put(key, Readable.from(chunks(bytes, 1024 * 1024)), { contentType: 'video/mp4' })
        expect(await storage.head(key)).toEqual({ sizeBytes: bytes.length, contentType: 'video/mp4' })
        expect(sha256(await readAll(await storage.get(key)))).toBe(sha256(bytes))
      })

      it('replaces an object put again at the same key', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('first'), { contentType: 'text/plain' })
        await storage.put(key, Buffer.from('second!'), { contentType: 'application/json' })
        expect(await storage.head(key)).toEqual({ sizeBytes: 7, contentType: 'application/json' })
        expect((await readAll(await storage.get(key))).toString()).toBe('second!')
      })

      it('stores an empty object', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.alloc(0), { contentType: 'text/plain' })
        expect(await storage.head(key)).toEqual({ sizeBytes: 0, contentType: 'text/plain' })
        expect((await readAll(await storage.get(key))).length).toBe(0)
      })

      it('refuses a stream whose length differs from sizeBytes and keeps nothing', async () => {
        const longer = freshKey()
        await expect(storage.put(longer, Readable.from([Buffer.alloc(11)]), { contentType: 'text/plain', sizeBytes: 10 })).rejects.toMatchObject({
          code: 'invalid_request',
        })
        expect(await storage.head(longer)).toBeNull()
        const shorter = freshKey()
        await expect(storage.put(shorter, Readable.from([Buffer.alloc(9)]), { contentType: 'text/plain', sizeBytes: 10 })).rejects.toMatchObject({
          code: 'invalid_request',
        })
        expect(await storage.head(shorter)).toBeNull()
        await expect(storage.put(shorter, Buffer.alloc(9), { contentType: 'text/plain', sizeBytes: 10 })).rejects.toMatchObject({ code: 'invalid_request' })
        expect(await storage.head(shorter)).toBeNull()
      })

      it('answers null for a missing object, and deleting it is not an error', async () => {
        const key = freshKey()
        expect(await storage.head(key)).toBeNull()
        expect(await storage.get(key)).toBeNull()
        await expect(storage.delete(key)).resolves.toBeUndefined()
      })

      it('deletes an object', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('bye'), { contentType: 'text/plain' })
        await storage.delete(key)
        expect(await storage.head(key)).toBeNull()
        expect(await storage.get(key)).toBeNull()
        expect(await storage.list(key, 10)).toEqual([])
      })

      it('treats a folder of keys as no object', async () => {
        const key = freshKey()
        await storage.put(`${key}/inside`, Buffer.from('x'), { contentType: 'text/plain' })
        expect(await storage.head(key)).toBeNull()
        expect(await storage.get(key)).toBeNull()
      })
    })

    describe('list', () => {
      const base = `projects/list-${randomBytes(4).toString('hex')}`
      const keys = [`${base}/a/1.txt`, `${base}/a/2.txt`, `${base}/a-b.txt`, `${base}/b/deep/3.txt`, `${base}/c.txt`]

      beforeAll(async () => {
        for (const key of keys) await storage.put(key, Buffer.from(key), { contentType: 'text/plain' })
        await storage.put(`${base}-other/x.txt`, Buffer.from('x'), { contentType: 'text/plain' })
      })

      // S3 lists in byte order; s3rver in folder-walk order, so the contract compares sets.
      it('lists every key under a folder prefix, and nothing else', async () => {
        expect((await storage.list(`${base}/`, 100)).sort()).toEqual([...keys].sort())
      })

      it('matches a prefix that ends inside a name', async () => {
        expect((await storage.list(`${base}/a`, 100)).sort()).toEqual([`${base}/a-b.txt`, `${base}/a/1.txt`, `${base}/a/2.txt`])
      })

      it('stops at the limit', async () => {
        const two = await storage.list(`${base}/`, 2)
        expect(two).toHaveLength(2)
        for (const key of two) expect(keys).toContain(key)
        expect(await storage.list(`${base}/`, 4)).toHaveLength(4)
      })

      it('lists nothing under a prefix with no keys', async () => {
        expect(await storage.list(`${base}/nothing/`, 10)).toEqual([])
      })

      it('lists from the top with an empty prefix', async () => {
        const listed = await storage.list('', 1000)
        expect(listed.length).toBeGreaterThan(0)
        expect(listed.every((k) => !k.startsWith('/'))).toBe(true)
      })

      it('refuses a limit outside 1 to 1000', async () => {
        await expect(storage.list(base, 0)).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.list(base, 1001)).rejects.toMatchObject({ code: 'invalid_request' })
      })
    })

    describe('presigned URLs over HTTP', () => {
      it('uploads with the PUT URL and downloads identical bytes with the GET URL', async () => {
        const key = freshKey('photo.png')
        const bytes = randomBytes(70_000)
        const uploadUrl = await storage.presignPut(key, { contentType: 'image/png', sizeBytes: bytes.length, expiresIn: 120 })
        expect(uploadUrl).toMatch(/^https?:\/\//)
        const put = await fetch(uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': 'image/png' } })
        expect(put.status).toBe(200)
        await put.arrayBuffer()
        expect(await storage.head(key)).toEqual({ sizeBytes: bytes.length, contentType: 'image/png' })

        const downloadUrl = await storage.presignGet(key, { expiresIn: 300, filename: 'Fête d’été 2024.png' })
        const got = await fetch(downloadUrl)
        expect(got.status).toBe(200)
        expect(got.headers.get('content-type')).toBe('image/png')
        expect(got.headers.get('content-length')).toBe(String(bytes.length))
        expect(got.headers.get('content-disposition')).toBe(
          `attachment; filename="F_te d__t_ 2024.png"; filename*=UTF-8''F%C3%AAte%20d%E2%80%99%C3%A9t%C3%A9%202024.png`,
        )
        expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true)
      })

      it('answers a byte range with 206 and those bytes only', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('0123456789abcdef'), { contentType: 'text/plain' })
        const got = await fetch(await storage.presignGet(key, { expiresIn: 60 }), { headers: { range: 'bytes=4-9' } })
        expect(got.status).toBe(206)
        expect(got.headers.get('content-range')).toBe('bytes 4-9/16')
        expect(await got.text()).toBe('456789')
      })

      it('overrides the Content-Type when the URL asks for one', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('{"a":1}'), { contentType: 'application/octet-stream' })
        const got = await fetch(await storage.presignGet(key, { expiresIn: 60, contentType: 'application/json' }))
        expect(got.status).toBe(200)
        expect(got.headers.get('content-type')).toBe('application/json')
        expect(await got.text()).toBe('{"a":1}')
      })

      it('refuses an upload URL once it has expired, and stores nothing', async () => {
        const key = freshKey()
        fixture.shiftClock(-3600_000)
        const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 5, expiresIn: 120 })
        fixture.shiftClock(0)
        const put = await fetch(url, { method: 'PUT', body: 'hello', headers: { 'content-type': 'text/plain' } })
        expect(put.status).toBe(403)
        expect(await storage.head(key)).toBeNull()
      })

      it('refuses a download URL once it has expired', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('secret'), { contentType: 'text/plain' })
        fixture.shiftClock(-3600_000)
        const url = await storage.presignGet(key, { expiresIn: 300 })
        fixture.shiftClock(0)
        const got = await fetch(url)
        expect(got.status).toBe(403)
        expect(await got.text()).not.toContain('secret')
      })

      it('refuses a body larger than signed, and stores nothing', async () => {
        const key = freshKey()
        const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 10, expiresIn: 120 })
        const put = await fetch(url, { method: 'PUT', body: 'x'.repeat(11), headers: { 'content-type': 'text/plain' } })
        expect(put.status).toBeGreaterThanOrEqual(400)
        expect(put.status).toBeLessThan(500)
        expect(await storage.head(key)).toBeNull()
      })

      it('refuses a body shorter than signed, and stores nothing', async () => {
        const key = freshKey()
        const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 10, expiresIn: 120 })
        const put = await fetch(url, { method: 'PUT', body: 'x'.repeat(9), headers: { 'content-type': 'text/plain' } })
        expect(put.status).toBeGreaterThanOrEqual(400)
        expect(put.status).toBeLessThan(500)
        expect(await storage.head(key)).toBeNull()
      })

      it('refuses another Content-Type, or none, and stores nothing', async () => {
        const key = freshKey()
        const url = await storage.presignPut(key, { contentType: 'image/png', sizeBytes: 4, expiresIn: 120 })
        const html = await fetch(url, { method: 'PUT', body: '<b/>', headers: { 'content-type': 'text/html' } })
        expect(html.status).toBeGreaterThanOrEqual(400)
        expect(html.status).toBeLessThan(500)
        const none = await fetch(url, { method: 'PUT', body: new Uint8Array(4) })
        expect(none.status).toBeGreaterThanOrEqual(400)
        expect(none.status).toBeLessThan(500)
        expect(await storage.head(key)).toBeNull()
      })

      it('refuses a URL whose signature was tampered with', async () => {
        const key = freshKey()
        await storage.put(key, Buffer.from('data'), { contentType: 'text/plain' })
        const got = await fetch(tamperSignature(await storage.presignGet(key, { expiresIn: 60 })))
        expect(got.status).toBe(403)
        const putUrl = tamperSignature(await storage.presignPut(freshKey(), { contentType: 'text/plain', sizeBytes: 4, expiresIn: 60 }))
        const put = await fetch(putUrl, { method: 'PUT', body: 'data', headers: { 'content-type': 'text/plain' } })
        expect(put.status).toBe(403)
      })

      it('refuses bad presign options', async () => {
        const key = freshKey()
        await expect(storage.presignPut(key, { contentType: 'not a type', sizeBytes: 1, expiresIn: 60 })).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.presignPut(key, { contentType: 'text/plain', sizeBytes: -1, expiresIn: 60 })).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 1, expiresIn: 0 })).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.presignGet(key, { expiresIn: 8 * 24 * 3600 })).rejects.toMatchObject({ code: 'invalid_request' })
      })

      // Must show: a 20 MB file goes up through the upload URL and comes back byte-identical.
      it('round-trips a 20 MB random file through the presigned URLs (same SHA-256)', async () => {
        const key = freshKey('big.bin')
        const bytes = randomBytes(20 * 1024 * 1024)
        const uploadUrl = await storage.presignPut(key, { contentType: 'application/octet-stream', sizeBytes: bytes.length, expiresIn: 120 })
        const put = await fetch(uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } })
        expect(put.status).toBe(200)
        await put.arrayBuffer()
        const got = await fetch(await storage.presignGet(key, { expiresIn: 300, filename: 'big.bin' }))
        expect(got.status).toBe(200)
        expect(got.headers.get('content-length')).toBe(String(bytes.length))
        expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(sha256(bytes))
      })
    })

    // An upload URL stores once (docs/storage.md § Single-use uploads). A driver that serves its own URLs
    // refuses a second PUT; on one that cannot (S3 serves them and overwrites), the bytes sent again reach
    // only the URL's own key, never a copy made of the first upload, which is what callers serve.
    describe('single-use uploads', () => {
      it('copies an object with its type inside the store; the source stays; a missing source answers false', async () => {
        const from = freshKey('a.json')
        const to = freshKey('b.json')
        await storage.put(from, Buffer.from('{"a":1}'), { contentType: 'application/json' })
        expect(await storage.copy(from, to)).toBe(true)
        expect(await storage.head(to)).toEqual({ sizeBytes: 7, contentType: 'application/json' })
        expect((await readAll(await storage.get(to))).toString()).toBe('{"a":1}')
        expect((await readAll(await storage.get(from))).toString()).toBe('{"a":1}')
        // A copy does not follow its source (the local driver links the file: the bytes are shared until a
        // write replaces the source), and copying over an existing object replaces it.
        await storage.put(from, Buffer.from('second'), { contentType: 'text/plain' })
        expect((await readAll(await storage.get(to))).toString()).toBe('{"a":1}')
        expect(await storage.head(to)).toEqual({ sizeBytes: 7, contentType: 'application/json' })
        expect(await storage.copy(from, to)).toBe(true)
        expect((await readAll(await storage.get(to))).toString()).toBe('second')
        const missing = freshKey()
        expect(await storage.copy(missing, freshKey())).toBe(false)
        await expect(storage.copy(from, from)).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.copy(from, '../escape')).rejects.toMatchObject({ code: 'invalid_request' })
      })

      it('bytes PUT again through an upload URL never reach the copy of the first upload', async () => {
        const uploadKey = freshKey('upload.txt')
        const servedKey = freshKey('served.txt')
        const url = await storage.presignPut(uploadKey, { contentType: 'text/plain', sizeBytes: 5, expiresIn: 120 })
        const put = (body: string) => fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/plain' } })
        const first = await put('hello')
        expect(first.status).toBe(200)
        await first.arrayBuffer()
        expect(await storage.copy(uploadKey, servedKey)).toBe(true)

        const again = await put('EVIL!')
        const answer = await again.text()
        if (storage.exclusiveUploads) {
          expect(again.status).toBe(409)
          expect(JSON.parse(answer)).toMatchObject({ error: 'conflict' })
          expect((await readAll(await storage.get(uploadKey))).toString()).toBe('hello')
        } else {
          // The store took it, at the URL's own key only.
          expect(again.status).toBe(200)
          expect((await readAll(await storage.get(uploadKey))).toString()).toBe('EVIL!')
        }
        expect((await readAll(await storage.get(servedKey))).toString()).toBe('hello')
        const served = await fetch(await storage.presignGet(servedKey, { expiresIn: 60 }))
        expect(await served.text()).toBe('hello')
      })

      it('an exclusive driver refuses a second PUT before any copy, keeping the first bytes', async () => {
        const key = freshKey()
        const url = await storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 5, expiresIn: 120 })
        const put = (body: string) => fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/plain' } })
        expect((await put('hello')).status).toBe(200)
        const again = await put('EVIL!')
        await again.arrayBuffer()
        expect(again.status).toBe(storage.exclusiveUploads ? 409 : 200)
        expect((await readAll(await storage.get(key))).toString()).toBe(storage.exclusiveUploads ? 'hello' : 'EVIL!')
      })
    })

    describe('keys that try to escape', () => {
      const hostile = ['../escape', 'projects/../../escape', 'projects/a/..', '/etc/passwd', 'C:/Windows/x', 'projects\\a', 'projects/a\0b', 'projects/a\nb', '', 'projects//a', 'projects/./a', 'projects/a/', 'x'.repeat(1025)]

      it.each(hostile.map((key) => [JSON.stringify(key.slice(0, 40)), key]))('refuses %s everywhere', async (_, key) => {
        const refused = { code: 'invalid_request' }
        await expect(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toMatchObject(refused)
        await expect(storage.get(key)).rejects.toMatchObject(refused)
        await expect(storage.head(key)).rejects.toMatchObject(refused)
        await expect(storage.delete(key)).rejects.toMatchObject(refused)
        await expect(storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 1, expiresIn: 60 })).rejects.toMatchObject(refused)
        await expect(storage.presignGet(key, { expiresIn: 60 })).rejects.toMatchObject(refused)
        await expect(storage.copy(key, 'projects/safe/x')).rejects.toMatchObject(refused)
        await expect(storage.copy('projects/safe/x', key)).rejects.toMatchObject(refused)
      })

      it('refuses a listing prefix that climbs out', async () => {
        await expect(storage.list('../', 10)).rejects.toMatchObject({ code: 'invalid_request' })
        await expect(storage.list('/etc', 10)).rejects.toMatchObject({ code: 'invalid_request' })
      })
    })
  })
}

/** Changes one character of the URL's signature (local `sig`, S3 `X-Amz-Signature`). */
export function tamperSignature(url: string): string {
  const parsed = new URL(url)
  const name = parsed.searchParams.has('sig') ? 'sig' : 'X-Amz-Signature'
  const signature = parsed.searchParams.get(name) ?? ''
  const last = signature.at(-1) === 'a' ? 'b' : 'a'
  parsed.searchParams.set(name, `${signature.slice(0, -1)}${last}`)
  return parsed.toString()
}

export async function readAll(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('expected a stream, got null')
  const parts: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
  return Buffer.concat(parts)
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

function* chunks(bytes: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

/** A clock at real time plus an offset the test moves (StorageFixture.shiftClock); sleeps and ticks run on real time. */
export function shiftableClock(): { clock: Clock; shift(offsetMs: number): void } {
  let offset = 0
  const clock: Clock = {
    ...systemClock,
    now: () => Date.now() + offset,
    seconds: () => Math.floor((Date.now() + offset) / 1000),
  }
  return { clock, shift: (offsetMs) => void (offset = offsetMs) }
}
