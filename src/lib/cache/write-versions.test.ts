import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryWriteVersions, createRedisWriteVersions, type WriteVersions } from './write-versions.js'

/** Two handles as two Plinth instances would hold them: the same object in process, two connections on Redis. */
type OpenPair = () => Promise<[WriteVersions, WriteVersions]>

function runWriteVersionsContract(name: string, openPair: OpenPair) {
  describe(`write versions (${name})`, () => {
    let opened: WriteVersions[] = []
    const pair = async () => {
      const both = await openPair()
      opened.push(...both)
      return both
    }
    afterEach(async () => {
      for (const versions of opened) await versions.close()
      opened = []
    })

    it('a key reads the same version until it is bumped, then a new one, on every instance', async () => {
      const [one, two] = await pair()
      const key = `c:${randomUUID()}`
      const first = await one.current(key)
      expect(await one.current(key)).toBe(first)
      expect(await two.current(key)).toBe(first)
      await two.bump(key)
      const second = await one.current(key)
      expect(second).not.toBe(first)
      expect(await two.current(key)).toBe(second)
    })

    it('a bump of a key never read moves it too, and keys are independent', async () => {
      const [one, two] = await pair()
      const a = `a:${randomUUID()}`
      const b = `b:${randomUUID()}`
      await one.bump(a)
      const seen = await two.current(a)
      const other = await two.current(b)
      await one.bump(a)
      expect(await two.current(a)).not.toBe(seen)
      expect(await one.current(b)).toBe(other)
    })

    it('a key starts at a random version, so a fresh store does not repeat what an old one answered', async () => {
      const [one] = await pair()
      const starts = new Set<string>()
      for (let i = 0; i < 5; i++) starts.add(await one.current(`fresh:${randomUUID()}`))
      expect(starts.size).toBe(5)
    })

    it('refuses use after close', async () => {
      const [one] = await pair()
      await one.close()
      if (one.shared) await expect(one.current('x')).rejects.toThrow(/closed/)
    })
  })
}

runWriteVersionsContract('memory', async () => {
  const versions = createMemoryWriteVersions()
  return [versions, versions]
})

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  const prefix = `plinth-test:${randomUUID()}:`
  runWriteVersionsContract('redis', async () => {
    const first = await createRedisWriteVersions(redisUrl, prefix)
    try {
      return [first, await createRedisWriteVersions(redisUrl, prefix)]
    } catch (err) {
      await first.close()
      throw err
    }
  })
}
