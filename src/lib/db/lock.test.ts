import type { Kysely } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { testDatabaseUrl } from '../../../test/support/postgres.js'
import { withNamedLock } from './lock.js'
import { createPgPool, openPostgres } from './postgres.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `rounds` overlapping holders of one name; answers the most that were inside at once. */
async function mostInside(holders: (() => Promise<void>)[]): Promise<number> {
  await Promise.all(holders.map((h) => h()))
  return peak
}
let inside = 0
let peak = 0
const work = async () => {
  inside++
  peak = Math.max(peak, inside)
  await sleep(20)
  inside--
}

describe('withNamedLock', () => {
  it('in one process, holders of one name take turns; other names do not wait', async () => {
    peak = 0
    const db = null as unknown as Kysely<any>
    expect(await mostInside(Array.from({ length: 5 }, () => () => withNamedLock(db, 'sqlite', 'a', work)))).toBe(1)
    peak = 0
    const names = ['x', 'y', 'z']
    expect(await mostInside(names.map((n) => () => withNamedLock(db, 'sqlite', n, work)))).toBe(3)
  })

  it('a failure releases the lock for the next holder', async () => {
    const db = null as unknown as Kysely<any>
    await expect(withNamedLock(db, 'sqlite', 'f', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await withNamedLock(db, 'sqlite', 'f', async () => 'next')).toBe('next')
  })

  // Two pools stand for two instances: the in-process queue cannot serialise them, only PostgreSQL's lock.
  describe.skipIf(!testDatabaseUrl())('on PostgreSQL, across instances', () => {
    const pools = testDatabaseUrl() ? [0, 1].map(() => createPgPool(testDatabaseUrl()!, () => {})) : []
    afterAll(async () => {
      for (const pool of pools) await pool.end()
    })

    it('holders on two instances never overlap, and the lock goes with a connection that ends', async () => {
      const [a, b] = pools.map(openPostgres) as [Kysely<any>, Kysely<any>]
      peak = 0
      // Different in-process queue names keep this process's queue out of it.
      const holders = Array.from(
        { length: 6 },
        (_, i) => () => withNamedLock(i % 2 ? a : b, 'postgres', 'lock-test', work, `queue-${i}`),
      )
      expect(await mostInside(holders)).toBe(1)

      // A holder whose connection dies (its instance was killed) releases the lock.
      const lost = await pools[0]!.connect()
      await lost.query(`select pg_advisory_lock(hashtext('plinth:lock-test-lost'))`)
      lost.release(new Error('the instance died'))
      const got = await Promise.race([
        withNamedLock(b, 'postgres', 'lock-test-lost', async () => 'taken'),
        sleep(5000).then(() => 'still held'),
      ])
      expect(got).toBe('taken')
    })
  })
})
