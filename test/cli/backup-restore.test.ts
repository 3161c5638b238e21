import Database from 'better-sqlite3'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runBackup } from '../../src/cli/backup.js'
import { runRestore } from '../../src/cli/restore.js'
import { createDatabaseRegistry, runMigrations } from '../../src/lib/db/index.js'
import { systemMigrations } from '../../src/migrations/system/index.js'

// What backup and restore refuse, and what restore's checks catch: a damaged file, a changed row count, a
// backup from a newer Plinth, the wrong secret key. Each refusal is exit 1 with a plain message and leaves
// DATA_DIR empty. The copy under write load is backup-under-load.test.ts.

const dirs: string[] = []
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-br-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

type Run = typeof runBackup
async function cli(run: Run, argv: string[], env: Record<string, string>) {
  let stdout = ''
  let stderr = ''
  const code = await run(argv, {
    env,
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
  })
  return { code, stdout, stderr }
}

/** A DATA_DIR with a migrated system.db, a project database with rows, an object and its metadata, a secret key. */
async function dataDirWithData(): Promise<string> {
  const dataDir = fresh()
  const registry = await createDatabaseRegistry({ kind: 'sqlite', dataDir })
  await runMigrations(registry.system.db, 'sqlite', systemMigrations)
  await registry.close()
  mkdirSync(join(dataDir, 'projects'))
  const project = new Database(join(dataDir, 'projects', 'p1.db'))
  project.pragma('journal_mode = WAL')
  project.exec('create table notes (id integer primary key, body text)')
  for (let i = 0; i < 250; i++) project.prepare('insert into notes (body) values (?)').run(`note ${i}`)
  project.close()
  mkdirSync(join(dataDir, 'files', 'projects', 'p1'), { recursive: true })
  writeFileSync(join(dataDir, 'files', 'projects', 'p1', 'blob.bin'), randomBytes(5000))
  mkdirSync(join(dataDir, 'files-meta', 'projects', 'p1'), { recursive: true })
  writeFileSync(join(dataDir, 'files-meta', 'projects', 'p1', 'blob.bin'), '{"contentType":"application/octet-stream"}')
  // Left out by design: unfinished uploads and caches.
  mkdirSync(join(dataDir, 'files-tmp'))
  writeFileSync(join(dataDir, 'files-tmp', 'partial'), 'half an upload')
  writeFileSync(join(dataDir, 'secret.key'), `${randomBytes(48).toString('base64url')}\n`, { mode: 0o600 })
  return dataDir
}

async function backedUp(): Promise<{ dataDir: string; backupDir: string }> {
  const dataDir = await dataDirWithData()
  const backupDir = join(fresh(), 'backup')
  const result = await cli(runBackup, [backupDir], { DATA_DIR: dataDir })
  expect(result.code, result.stderr).toBe(0)
  return { dataDir, backupDir }
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
const writeManifest = (dir: string, m: unknown) => writeFileSync(join(dir, 'manifest.json'), JSON.stringify(m))

describe('plinth backup', () => {
  it('copies every database and file but unfinished uploads, and says what it copied', async () => {
    const { backupDir } = await backedUp()
    const manifest = manifestOf(backupDir)
    expect(manifest.databases.map((d: { path: string }) => d.path)).toEqual(['system.db', 'projects/p1.db'])
    expect(manifest.databases[1].tables).toEqual({ notes: 250 })
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual([
      'files-meta/projects/p1/blob.bin',
      'files/projects/p1/blob.bin',
      'secret.key',
    ])
    expect(existsSync(join(backupDir, 'files-tmp'))).toBe(false)
    expect(manifest.migration).toEqual({ last: systemMigrations.at(-1)!.name, count: systemMigrations.length })
    expect(manifest.plinthVersion).toMatch(/^\d+\.\d+\.\d+/)
    // Copies stand alone: no WAL beside them.
    expect(readdirSync(join(backupDir, 'projects'))).toEqual(['p1.db'])
  })

  it('refuses PostgreSQL (pointing at the docs, printing no URL), a DATA_DIR without data, a target inside DATA_DIR or not empty', async () => {
    const dataDir = await dataDirWithData()
    const pg = await cli(runBackup, [join(fresh(), 'b')], {
      DATA_DIR: dataDir,
      DATABASE_URL: 'postgres://u:pg-secret@db/x',
    })
    expect(pg.code).toBe(1)
    expect(pg.stderr).toContain('pg_dump and pg_restore')
    expect(pg.stderr).toContain('docs/running.md')
    expect(pg.stderr).not.toContain('pg-secret')

    const empty = await cli(runBackup, [join(fresh(), 'b')], { DATA_DIR: fresh() })
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('system.db is missing')

    const inside = await cli(runBackup, [join(dataDir, 'backups', 'today')], { DATA_DIR: dataDir })
    expect(inside.code).toBe(1)
    expect(inside.stderr).toContain('must be outside DATA_DIR')

    const taken = fresh()
    writeFileSync(join(taken, 'something'), 'x')
    const notEmpty = await cli(runBackup, [taken], { DATA_DIR: dataDir })
    expect(notEmpty.code).toBe(1)
    expect(notEmpty.stderr).toContain('is not empty')
    expect(readdirSync(taken)).toEqual(['something'])
  })

  it('usage: a missing directory is exit 2; --help exit 0', async () => {
    expect((await cli(runBackup, [], {})).code).toBe(2)
    expect((await cli(runBackup, ['a', 'b'], {})).code).toBe(2)
    const help = await cli(runBackup, ['--help'], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: plinth backup <dir>')
  })
})

describe('plinth restore', () => {
  it('restores into an empty DATA_DIR: the same rows and bytes, the key at mode 0600', async () => {
    const { dataDir, backupDir } = await backedUp()
    const target = join(fresh(), 'data')
    const result = await cli(runRestore, [backupDir], { DATA_DIR: target })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`Restored 2 databases`)
    const db = new Database(join(target, 'projects', 'p1.db'), { readonly: true })
    expect(db.prepare('select count(*) from notes').pluck().get()).toBe(250)
    db.close()
    for (const rel of ['files/projects/p1/blob.bin', 'secret.key']) {
      expect(readFileSync(join(target, rel)).equals(readFileSync(join(dataDir, rel)))).toBe(true)
    }
    expect(statSync(join(target, 'secret.key')).mode & 0o077).toBe(0)
  })

  const refusals: { name: string; damage: (backupDir: string) => void; env?: Record<string, string>; says: string }[] =
    [
      {
        name: 'a file whose bytes changed',
        damage: (dir) => writeFileSync(join(dir, 'files', 'projects', 'p1', 'blob.bin'), randomBytes(5000)),
        says: 'files/projects/p1/blob.bin: checksum differs',
      },
      {
        name: 'a database file missing',
        damage: (dir) => rmSync(join(dir, 'projects', 'p1.db')),
        says: 'projects/p1.db: missing',
      },
      {
        name: 'row counts that do not match the database (manifest and database disagree)',
        damage: (dir) => {
          const m = manifestOf(dir)
          m.databases[1].tables.notes = 251
          writeManifest(dir, m)
        },
        says: 'table notes: 251 rows expected, 250 found',
      },
      {
        name: 'a backup from a newer Plinth',
        damage: (dir) => {
          const m = manifestOf(dir)
          m.migration.last = '9999-from-the-future'
          writeManifest(dir, m)
        },
        says: 'taken by a newer Plinth',
      },
      {
        name: 'a SECRET_KEY other than the backup key',
        damage: () => {},
        env: { SECRET_KEY: randomBytes(32).toString('hex') },
        says: 'SECRET_KEY is set and differs from the key in the backup',
      },
      {
        name: 'no manifest (a backup that did not finish)',
        damage: (dir) => rmSync(join(dir, 'manifest.json')),
        says: 'not a Plinth backup, or one that did not finish',
      },
    ]

  for (const refusal of refusals) {
    it(`refuses ${refusal.name} (exit 1) and leaves DATA_DIR empty`, async () => {
      const { backupDir } = await backedUp()
      refusal.damage(backupDir)
      const target = fresh()
      const result = await cli(runRestore, [backupDir], { DATA_DIR: target, ...refusal.env })
      expect(result.code, result.stdout).toBe(1)
      expect(result.stderr).toContain(refusal.says)
      expect(readdirSync(target)).toEqual([])
    })
  }

  it('refuses a DATA_DIR that is not empty, and PostgreSQL', async () => {
    const { dataDir, backupDir } = await backedUp()
    const full = await cli(runRestore, [backupDir], { DATA_DIR: dataDir })
    expect(full.code).toBe(1)
    expect(full.stderr).toContain('is not empty: restore only into a new or empty directory')
    const pg = await cli(runRestore, [backupDir], { DATA_DIR: fresh(), DATABASE_URL: 'postgres://a@b/c' })
    expect(pg.code).toBe(1)
    expect(pg.stderr).toContain('pg_dump and pg_restore')
  })

  it('a backup taken with SECRET_KEY holds no key, and restores only with that key', async () => {
    const dataDir = await dataDirWithData()
    rmSync(join(dataDir, 'secret.key'))
    const key = randomBytes(32).toString('hex')
    const backupDir = join(fresh(), 'b')
    const backup = await cli(runBackup, [backupDir], { DATA_DIR: dataDir, SECRET_KEY: key })
    expect(backup.code, backup.stderr).toBe(0)
    expect(backup.stdout).toContain('SECRET_KEY comes from the environment and is not in the backup')
    expect(existsSync(join(backupDir, 'secret.key'))).toBe(false)
    expect(readFileSync(join(backupDir, 'manifest.json'), 'utf8')).not.toContain(key)

    const without = await cli(runRestore, [backupDir], { DATA_DIR: fresh() })
    expect(without.code).toBe(1)
    expect(without.stderr).toContain('set the same SECRET_KEY')
    const wrong = await cli(runRestore, [backupDir], { DATA_DIR: fresh(), SECRET_KEY: randomBytes(32).toString('hex') })
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('not the key the backup was taken with')
    const right = await cli(runRestore, [backupDir], { DATA_DIR: join(fresh(), 'd'), SECRET_KEY: key })
    expect(right.code, right.stderr).toBe(0)
  })
})
