import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'
import { startupWarnings } from './startup-warnings.js'

const dataDir = mkdtempSync(join(tmpdir(), 'plinth-warnings-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const postgres = { DATABASE_URL: 'postgres://u@db.example/plinth', SECRET_KEY: 'k'.repeat(32) }
const redis = { REDIS_URL: 'redis://cache.example:6379' }
const s3 = { S3_ENDPOINT: 'https://s3.example', S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret' }

describe('startupWarnings', () => {
  const rows: { name: string; env: Record<string, string>; local: boolean }[] = [
    { name: 'PostgreSQL + Redis, files on the local disk: warns', env: { ...postgres, ...redis }, local: true },
    { name: 'PostgreSQL + Redis + S3: nothing', env: { ...postgres, ...redis, ...s3 }, local: false },
    { name: 'PostgreSQL alone (one instance): nothing', env: postgres, local: false },
    { name: 'SQLite + Redis (SQLite is one instance): nothing', env: redis, local: false },
    { name: 'SQLite alone: nothing', env: {}, local: false },
  ]
  for (const row of rows) {
    it(row.name, () => {
      const warnings = startupWarnings(loadConfig({ DATA_DIR: dataDir, ...row.env }))
      if (!row.local) return expect(warnings).toEqual([])
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/404/)
      for (const name of ['S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'])
        expect(warnings[0]).toContain(name)
    })
  }
})
