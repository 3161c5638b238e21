import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { runDoctor } from '../../src/cli/doctor.js'
import { createDatabaseRegistry, runMigrations } from '../../src/lib/db/index.js'
import { systemMigrations } from '../../src/migrations/system/index.js'
import { freePort } from '../support/harness.js'
import { testDatabaseUrl } from '../support/postgres.js'
import { s3Settings, startS3Store } from '../support/s3-store.js'

// `plinth doctor` as a user runs it: one line per check, ok / warn / FAIL, exit 1 on any FAIL. Unreachable
// services are 127.0.0.1 ports nothing listens on; every secret given is checked to be absent from the output.

const dirs: string[] = []
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-doctor-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

async function doctor(env: Record<string, string>, argv: string[] = []) {
  let stdout = ''
  let stderr = ''
  const code = await runDoctor(argv, {
    env,
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  })
  const line = (name: string) => stdout.split('\n').find((l) => l.slice(6).startsWith(`${name} `)) ?? ''
  return { code, stdout, stderr, line }
}

/** A DATA_DIR as a server leaves it: system.db migrated, secret.key written. */
async function migratedDataDir(): Promise<string> {
  const dataDir = freshDir()
  const registry = await createDatabaseRegistry({ kind: 'sqlite', dataDir })
  await runMigrations(registry.system.db, 'sqlite', systemMigrations)
  await registry.close()
  writeFileSync(join(dataDir, 'secret.key'), `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600 })
  return dataDir
}

describe('plinth doctor', () => {
  it('a good embedded configuration passes: every check ok (email warns: no channel), exit 0', async () => {
    const dataDir = await migratedDataDir()
    const result = await doctor({ DATA_DIR: dataDir })
    expect(result.code, result.stdout).toBe(0)
    expect(result.line('config')).toMatch(/^ok +config +every setting is valid$/)
    expect(result.line('secret key')).toMatch(/^ok .*secret\.key \(64 bytes, mode 0600\)$/)
    expect(result.line('database')).toMatch(
      new RegExp(`^ok .*SQLite in .*: writable; migrations up to date \\(${systemMigrations.length}\\)$`),
    )
    expect(result.line('redis')).toMatch(/^ok .*not configured/)
    expect(result.line('storage')).toMatch(/^ok .*local files in .*files/)
    expect(result.line('email')).toMatch(/^warn .*no channel/)
    expect(result.stdout).not.toContain('FAIL')
    expect(result.stdout).toContain('No problems found.')
  })

  it.skipIf(!testDatabaseUrl())('a reachable PostgreSQL and Redis pass', async () => {
    const secret = randomBytes(32).toString('hex')
    const result = await doctor({
      DATA_DIR: freshDir(),
      DATABASE_URL: testDatabaseUrl()!,
      SECRET_KEY: secret,
      ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    })
    expect(result.line('database'), result.stdout).toMatch(/^ok +database +PostgreSQL at .*: connected/)
    if (process.env.TEST_REDIS_URL) expect(result.line('redis')).toMatch(/^ok .*answers PING$/)
    expect(result.stdout).not.toContain(secret)
  })

  it('each unreachable service FAILs with a readable line naming where, and no password is printed', async () => {
    const [pgPort, redisPort, smtpPort] = [await freePort(), await freePort(), await freePort()]
    const secretKey = randomBytes(32).toString('hex')
    const result = await doctor({
      DATA_DIR: freshDir(),
      DATABASE_URL: `postgres://plinth:pg-pass-4711@127.0.0.1:${pgPort}/plinth`,
      SECRET_KEY: secretKey,
      REDIS_URL: `redis://:redis-pass-4712@127.0.0.1:${redisPort}`,
      SMTP_URL: `smtp://mailer:smtp-pass-4713@127.0.0.1:${smtpPort}`,
    })
    expect(result.code).toBe(1)
    const refused = 'connection refused (is it running, and listening on that address and port?)'
    expect(result.line('database')).toBe(
      `FAIL  database    cannot connect to PostgreSQL at 127.0.0.1:${pgPort}/plinth: ${refused}`,
    )
    expect(result.line('redis')).toBe(`FAIL  redis       cannot connect to Redis at 127.0.0.1:${redisPort}: ${refused}`)
    expect(result.line('email')).toBe(`FAIL  email       cannot use SMTP at 127.0.0.1:${smtpPort}: ${refused}`)
    expect(result.stdout).toContain('3 checks FAILED.')
    for (const secret of ['pg-pass-4711', 'redis-pass-4712', 'smtp-pass-4713', secretKey]) {
      expect(result.stdout + result.stderr).not.toContain(secret)
    }
  })

  it('a malformed DATABASE_URL fails the configuration in plain words, by its length only; the rest waits', async () => {
    const result = await doctor({
      DATA_DIR: freshDir(),
      DATABASE_URL: 'mysql://root:hunter2-db@db.internal/app',
      PORT: 'eighty',
    })
    expect(result.code).toBe(1)
    expect(result.line('config')).toBe(
      'FAIL  config      PORT: must be a whole number (got "eighty"); DATABASE_URL: must be a URL starting with postgres: or postgresql: (got 39 characters). Fix these settings (docs/configuration.md lists each one)',
    )
    expect(result.stdout).toContain('checked once the configuration is valid')
    expect(result.line('database')).toBe('')
    expect(result.stdout).not.toContain('hunter2')
  })

  it('DATABASE_URL without SECRET_KEY is a configuration FAIL', async () => {
    const result = await doctor({ DATA_DIR: freshDir(), DATABASE_URL: 'postgres://a@127.0.0.1:1/b' })
    expect(result.code).toBe(1)
    expect(result.line('config')).toContain('SECRET_KEY: required with DATABASE_URL')
  })

  it('a DATA_DIR with data but no secret.key FAILs: a new key would orphan stored secrets', async () => {
    const dataDir = await migratedDataDir()
    rmSync(join(dataDir, 'secret.key'))
    const result = await doctor({ DATA_DIR: dataDir })
    expect(result.code).toBe(1)
    expect(result.line('secret key')).toMatch(
      /^FAIL .*secret\.key is missing but DATA_DIR holds data.*Restore the file/,
    )
    // The check wrote nothing: no new key appeared.
    expect(() => mkdirSync(join(dataDir, 'secret.key'))).not.toThrow()
  })

  it('a database newer than this build FAILs; a pending migration warns', async () => {
    const dataDir = await migratedDataDir()
    const registry = await createDatabaseRegistry({ kind: 'sqlite', dataDir })
    await registry.system.db.insertInto('plinth_migrations').values({ name: '9999-future', applied_at: 0 }).execute()
    await registry.close()
    const newer = await doctor({ DATA_DIR: dataDir })
    expect(newer.code).toBe(1)
    expect(newer.line('database')).toMatch(/^FAIL .*migrations this Plinth does not know \(9999-future\)/)

    const registry2 = await createDatabaseRegistry({ kind: 'sqlite', dataDir })
    await registry2.system.db
      .deleteFrom('plinth_migrations')
      .where('name', 'in', ['9999-future', systemMigrations.at(-1)!.name])
      .execute()
    await registry2.close()
    const older = await doctor({ DATA_DIR: dataDir })
    expect(older.code).toBe(0)
    expect(older.line('database')).toMatch(/^warn .*1 migrations pending: plinth serve applies them/)
  })

  it('S3 storage: a probe object put, read and deleted passes; a bucket that does not exist FAILs by its error name', async () => {
    const store = await startS3Store()
    try {
      const settings = s3Settings(store)
      const good = await doctor({ DATA_DIR: freshDir(), ...settings })
      expect(good.line('storage'), good.stdout).toMatch(
        /^ok +storage +S3 bucket plinth-test at 127\.0\.0\.1:\d+: a probe object was put, read and deleted$/,
      )
      const missing = await doctor({ DATA_DIR: freshDir(), ...settings, S3_BUCKET: 'no-such-bucket' })
      expect(missing.code).toBe(1)
      expect(missing.line('storage')).toMatch(
        /^FAIL .*S3 bucket no-such-bucket at .*: the probe's put failed: NoSuchBucket\. Check S3_ENDPOINT/,
      )
      for (const out of [good.stdout, missing.stdout]) expect(out).not.toContain(settings.S3_SECRET_ACCESS_KEY)
    } finally {
      await store.stop()
    }
  })

  it('SMTP: a server that accepts the login passes; a refused login FAILs and says what to check', async () => {
    const smtp = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 'right-pass-4714') return callback(null, { user: 'mailer' })
        callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }))
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
    const { port } = smtp.server.address() as AddressInfo
    try {
      const good = await doctor({ DATA_DIR: freshDir(), SMTP_URL: `smtp://mailer:right-pass-4714@127.0.0.1:${port}` })
      expect(good.line('email'), good.stdout).toBe(
        `ok    email       SMTP at 127.0.0.1:${port}: connected and logged in; a message is not sent`,
      )
      const refused = await doctor({
        DATA_DIR: freshDir(),
        SMTP_URL: `smtp://mailer:wrong-pass-4715@127.0.0.1:${port}`,
      })
      expect(refused.code).toBe(1)
      expect(refused.line('email')).toBe(
        `FAIL  email       cannot use SMTP at 127.0.0.1:${port}: the server refused the login (check the user and password in SMTP_URL)`,
      )
      for (const out of [good.stdout, refused.stdout]) expect(out).not.toMatch(/right-pass|wrong-pass/)
    } finally {
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })

  it('usage: an argument is a mistake (exit 2); --help prints the checks (exit 0)', async () => {
    const wrong = await doctor({}, ['extra'])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain("Run 'plinth doctor --help'")
    const help = await doctor({}, ['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: plinth doctor')
  })
})
