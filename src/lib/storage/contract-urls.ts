import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { sha256, tamperSignature, type StorageContractContext, type StorageFixture } from './contract-support.js'
import type { ObjectStorage } from './types.js'

/** The contract's presigned URLs: uploads and downloads over real HTTP, ranges, expiry, tampering and refusals. */
export function runPresignedUrlContract(ctx: StorageContractContext): void {
  const { freshKey } = ctx
  describe('presigned URLs over HTTP', () => {
    let storage: ObjectStorage
    let fixture: StorageFixture
    beforeAll(() => {
      storage = ctx.storage()
      fixture = ctx.fixture()
    })

    it('uploads with the PUT URL and downloads identical bytes with the GET URL', async () => {
      const key = freshKey('photo.png')
      const bytes = randomBytes(70_000)
      const uploadUrl = await storage.presignPut(key, {
        contentType: 'image/png',
        sizeBytes: bytes.length,
        expiresIn: 120,
      })
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
      const putUrl = tamperSignature(
        await storage.presignPut(freshKey(), { contentType: 'text/plain', sizeBytes: 4, expiresIn: 60 }),
      )
      const put = await fetch(putUrl, { method: 'PUT', body: 'data', headers: { 'content-type': 'text/plain' } })
      expect(put.status).toBe(403)
    })

    it('refuses bad presign options', async () => {
      const key = freshKey()
      await expect(
        storage.presignPut(key, { contentType: 'not a type', sizeBytes: 1, expiresIn: 60 }),
      ).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(
        storage.presignPut(key, { contentType: 'text/plain', sizeBytes: -1, expiresIn: 60 }),
      ).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(
        storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 1, expiresIn: 0 }),
      ).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(storage.presignGet(key, { expiresIn: 8 * 24 * 3600 })).rejects.toMatchObject({
        code: 'invalid_request',
      })
    })

    // Must show: a 20 MB file goes up through the upload URL and comes back byte-identical.
    it('round-trips a 20 MB random file through the presigned URLs (same SHA-256)', async () => {
      const key = freshKey('big.bin')
      const bytes = randomBytes(20 * 1024 * 1024)
      const uploadUrl = await storage.presignPut(key, {
        contentType: 'application/octet-stream',
        sizeBytes: bytes.length,
        expiresIn: 120,
      })
      const put = await fetch(uploadUrl, {
        method: 'PUT',
        body: bytes,
        headers: { 'content-type': 'application/octet-stream' },
      })
      expect(put.status).toBe(200)
      await put.arrayBuffer()
      const got = await fetch(await storage.presignGet(key, { expiresIn: 300, filename: 'big.bin' }))
      expect(got.status).toBe(200)
      expect(got.headers.get('content-length')).toBe(String(bytes.length))
      expect(sha256(Buffer.from(await got.arrayBuffer()))).toBe(sha256(bytes))
    })
  })
}
