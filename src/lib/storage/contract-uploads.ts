import { beforeAll, describe, expect, it } from 'vitest'
import { readAll, type StorageContractContext } from './contract-support.js'
import type { ObjectStorage } from './types.js'

/** The contract's copies and single-use upload URLs. */
export function runSingleUseContract(ctx: StorageContractContext): void {
  const { freshKey } = ctx
  // An upload URL stores once (docs/storage.md § Single-use uploads). A driver that serves its own URLs
  // refuses a second PUT; on one that cannot (S3 serves them and overwrites), the bytes sent again reach
  // only the URL's own key, never a copy made of the first upload, which is what callers serve.
  describe('single-use uploads', () => {
    let storage: ObjectStorage
    beforeAll(() => {
      storage = ctx.storage()
    })

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
}
