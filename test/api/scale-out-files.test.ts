import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { boot, startServer, type TestServer } from '../support/harness.js'
import { s3Settings, startS3Store } from '../support/s3-store.js'

/**
 * docs/configuration.md § Scale-out: PostgreSQL and Redis make instances share everything but files on the
 * local disk, so that setup is said once at start-up, as one warn line naming what fixes it. The PostgreSQL
 * cases run only when TEST_DATABASE_URL and TEST_REDIS_URL are both set (the PostgreSQL + Redis run).
 */
const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL
const enabled = Boolean(databaseUrl && redisUrl)

/** The start-up warnings about files in a scale-out, parsed. */
function filesWarnings(server: TestServer): { level: number; msg: string }[] {
  return server.logs
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.msg.includes('local disk') && line.msg.includes('S3_ENDPOINT'))
}

describe.runIf(enabled)(
  'scale-out with files on the local disk (runs only when TEST_DATABASE_URL and TEST_REDIS_URL are both set)',
  () => {
    it('PostgreSQL + Redis and no S3_*: one warn line saying what breaks and which settings fix it', async () => {
      const server = await startServer({ REDIS_URL: redisUrl ?? '' })
      try {
        expect(server.app.config).toMatchObject({
          database: { kind: 'postgres' },
          redisUrl,
          storage: { kind: 'local' },
        })
        const warnings = filesWarnings(server)
        expect(warnings).toHaveLength(1)
        expect(warnings[0]!.level).toBe(40)
        expect(warnings[0]!.msg).toMatch(/missing \(404\) on the others/)
        for (const name of [
          'DATABASE_URL',
          'REDIS_URL',
          'S3_ENDPOINT',
          'S3_BUCKET',
          'S3_ACCESS_KEY_ID',
          'S3_SECRET_ACCESS_KEY',
        ])
          expect(warnings[0]!.msg).toContain(name)
      } finally {
        await server.stop()
      }
    })

    it('PostgreSQL + Redis + S3: no warning', async () => {
      const store = await startS3Store()
      try {
        const server = await startServer({ REDIS_URL: redisUrl ?? '', ...s3Settings(store) })
        try {
          expect(server.app.storage.kind).toBe('s3')
          expect(filesWarnings(server)).toEqual([])
        } finally {
          await server.stop()
        }
      } finally {
        await store.stop()
      }
    })
  },
)

describe('files on the local disk of one instance', () => {
  it('SQLite (one instance by design), with Redis when the run has it: no warning', async () => {
    const server = await boot(
      redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: `plinth-test:${randomBytes(6).toString('hex')}:` } : {},
    )
    try {
      expect(server.app.config.database.kind).toBe('sqlite')
      expect(server.logs.length).toBeGreaterThan(0)
      expect(filesWarnings(server)).toEqual([])
    } finally {
      await server.stop()
    }
  })
})
