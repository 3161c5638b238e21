import { beforeAll, describe, expect, it } from 'vitest'
import type { StorageContractContext } from './contract-support.js'
import type { ObjectStorage } from './types.js'

/** The contract's refusals of keys and prefixes that would leave the storage root or are not keys at all. */
export function runHostileKeyContract(ctx: StorageContractContext): void {
  describe('keys that try to escape', () => {
    let storage: ObjectStorage
    beforeAll(() => {
      storage = ctx.storage()
    })

    const hostile = [
      '../escape',
      'projects/../../escape',
      'projects/a/..',
      '/etc/passwd',
      'C:/Windows/x',
      'projects\\a',
      'projects/a\0b',
      'projects/a\nb',
      '',
      'projects//a',
      'projects/./a',
      'projects/a/',
      'x'.repeat(1025),
    ]

    it.each(hostile.map((key) => [JSON.stringify(key.slice(0, 40)), key]))('refuses %s everywhere', async (_, key) => {
      const refused = { code: 'invalid_request' }
      await expect(storage.put(key, Buffer.from('x'), { contentType: 'text/plain' })).rejects.toMatchObject(refused)
      await expect(storage.get(key)).rejects.toMatchObject(refused)
      await expect(storage.head(key)).rejects.toMatchObject(refused)
      await expect(storage.delete(key)).rejects.toMatchObject(refused)
      await expect(
        storage.presignPut(key, { contentType: 'text/plain', sizeBytes: 1, expiresIn: 60 }),
      ).rejects.toMatchObject(refused)
      await expect(storage.presignGet(key, { expiresIn: 60 })).rejects.toMatchObject(refused)
      await expect(storage.copy(key, 'projects/safe/x')).rejects.toMatchObject(refused)
      await expect(storage.copy('projects/safe/x', key)).rejects.toMatchObject(refused)
    })

    it('refuses a listing prefix that climbs out', async () => {
      await expect(storage.list('../', 10)).rejects.toMatchObject({ code: 'invalid_request' })
      await expect(storage.list('/etc', 10)).rejects.toMatchObject({ code: 'invalid_request' })
    })
  })
}
