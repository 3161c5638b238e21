import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { beforeAll, describe, expect, it } from 'vitest'
import { chunks, readAll, sha256, type StorageContractContext } from './contract-support.js'
import type { ObjectStorage } from './types.js'

/** The contract's objects: put, get, head and delete of one key, and listing keys under a prefix. */
export function runObjectContract(ctx: StorageContractContext): void {
  const { freshKey } = ctx
  describe('put, get, head, delete', () => {
    let storage: ObjectStorage
    beforeAll(() => {
      storage = ctx.storage()
    })

    it('stores a buffer and gives back the same bytes, size and type', async () => {
      const key = freshKey('hello.txt')
      await storage.put(key, Buffer.from('hello, world'), { contentType: 'text/plain' })
      expect(await storage.head(key)).toEqual({ sizeBytes: 12, contentType: 'text/plain' })
      expect((await readAll(await storage.get(key))).toString()).toBe('hello, world')
    })

    it('stores a stream of known length', async () => {
      const key = freshKey()
      const bytes = randomBytes(300_000)
      await storage.put(key, Readable.from(chunks(bytes, 65_536)), {
        contentType: 'application/octet-stream',
        sizeBytes: bytes.length,
      })
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
      await expect(
        storage.put(longer, Readable.from([Buffer.alloc(11)]), { contentType: 'text/plain', sizeBytes: 10 }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
      })
      expect(await storage.head(longer)).toBeNull()
      const shorter = freshKey()
      await expect(
        storage.put(shorter, Readable.from([Buffer.alloc(9)]), { contentType: 'text/plain', sizeBytes: 10 }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
      })
      expect(await storage.head(shorter)).toBeNull()
      await expect(
        storage.put(shorter, Buffer.alloc(9), { contentType: 'text/plain', sizeBytes: 10 }),
      ).rejects.toMatchObject({ code: 'invalid_request' })
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
    let storage: ObjectStorage
    beforeAll(() => {
      storage = ctx.storage()
    })

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
      expect((await storage.list(`${base}/a`, 100)).sort()).toEqual([
        `${base}/a-b.txt`,
        `${base}/a/1.txt`,
        `${base}/a/2.txt`,
      ])
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
}
