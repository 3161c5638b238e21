import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send, type Reply } from '../support/harness.js'
import { testDatabaseUrl } from '../support/postgres.js'
import { kill, serve, type Running } from '../support/serve-process.js'

// A real SIGKILL of a server (bin/plinth.js) in the middle of POST /collections, between the two commits a
// create makes: the table in the project's database and the registration in the system database
// (decision 077). Where the kill lands is made certain, not guessed: this process holds the write lock of
// one of the two SQLite files (BEGIN IMMEDIATE), so the server's create waits on it (its busy timeout is 5 s)
// with the other commit made or not yet made; then the kill, then a restart on the same data.
// Whatever the kill interrupted, the collection is afterwards either absent or whole, never registered
// without its table (which answered 500 to every later use and 409 to creating it again), and creating it
// again works.
//
// PostgreSQL runs the same code (the order of the two commits is not dialect-specific); a kill there is
// covered by blueprints-install-kill. d1 and kv collections share the project database (where a leftover
// table could block a name); durable_object and r2_sql tables are files named after the collection's id.
const chosenType = process.env.TEST_STORAGE_TYPE || undefined
const skipReason = testDatabaseUrl()
  ? 'TEST_DATABASE_URL is set: the kill is placed with SQLite file locks'
  : chosenType === 'durable_object' || chosenType === 'r2_sql'
    ? `TEST_STORAGE_TYPE=${chosenType}: its table is a file named after the collection id`
    : null
if (skipReason) console.warn(`collections-create-kill: skipped, ${skipReason}`)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const body = (name: string) => ({
  name,
  ...(chosenType ? { storageType: chosenType } : {}),
  fields: [{ name: 'title', type: 'text', required: true }],
})

describe.skipIf(skipReason)('SIGKILL between the two commits of a collection create', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-create-kill-'))
  const env = { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', PASSWORD_HASH_ITERATIONS: '1000' }
  let running: Running
  let token: string
  let projectFile: string
  const call = (method: string, path: string, payload?: unknown): Promise<Reply> =>
    send(running.url, method, path, { token, ...(payload === undefined ? {} : { body: payload }) })

  beforeAll(async () => {
    running = await serve(env)
    const signUp = await send(running.url, 'POST', '/api/auth/sign-up/email', {
      body: { email: 'owner@example.com', password: 'owner password', name: 'Owner' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    token = signUp.body.token
    // The project's database file exists once something lives in it.
    const first = await call('POST', '/api/v1/collections', body('first'))
    expect(first.status, first.text).toBe(201)
    const me = await call('GET', '/api/v1/projects')
    const projectId = (me.body.data as { id: string }[])[0]!.id
    projectFile = join(dataDir, 'projects', `${projectId}.db`)
  }, 60_000)
  afterAll(async () => {
    if (running) await kill(running)
    rmSync(dataDir, { recursive: true, force: true })
  })

  const tableIn = (file: string, name: string): boolean => {
    const db = new Database(file, { readonly: true, fileMustExist: true })
    try {
      return db.prepare('select 1 from sqlite_master where type = ? and name = ?').get('table', name) !== undefined
    } finally {
      db.close()
    }
  }

  /** Holds `file`'s write lock while `during` runs, then kills the server and starts it again. */
  async function killWhileLocked(file: string, name: string, during: () => Promise<void>): Promise<void> {
    const lock = new Database(file, { fileMustExist: true })
    lock.pragma('busy_timeout = 5000')
    lock.exec('begin immediate')
    const answered = call('POST', '/api/v1/collections', body(name)).then(
      (r) => r.status,
      () => null,
    )
    try {
      await during()
      await kill(running)
    } finally {
      lock.exec('rollback')
      lock.close()
    }
    // The create never answered: the kill came first.
    expect(await answered).toBeNull()
    running = await serve(env)
  }

  /** The collection is whole: listed, writable, readable, and creating it again is refused as taken. */
  async function expectWhole(name: string): Promise<void> {
    const listed = await call('GET', '/api/v1/collections')
    expect((listed.body.data as { name: string }[]).map((c) => c.name)).toContain(name)
    const written = await call('POST', `/api/v1/collections/${name}/records`, { title: 'after the kill' })
    expect(written.status, written.text).toBe(201)
    const read = await call('GET', `/api/v1/collections/${name}/records`)
    expect(read.status, read.text).toBe(200)
    expect(read.body.data.map((r: { title: string }) => r.title)).toEqual(['after the kill'])
    const again = await call('POST', '/api/v1/collections', body(name))
    expect(again.status, again.text).toBe(409)
  }

  it('killed while the table waits to be made: nothing is registered, and the create works again', async () => {
    // The system database is free, the project's is locked: the create waits at its DDL.
    await killWhileLocked(projectFile, 'waiting_table', async () => {
      await sleep(1500)
    })
    expect(tableIn(projectFile, 'waiting_table')).toBe(false)
    const listed = await call('GET', '/api/v1/collections')
    expect((listed.body.data as { name: string }[]).map((c) => c.name)).not.toContain('waiting_table')
    const again = await call('POST', '/api/v1/collections', body('waiting_table'))
    expect(again.status, again.text).toBe(201)
    await expectWhole('waiting_table')
  }, 120_000)

  it('killed after the table was made, before its registration: the leftover table is cleared and the create works again', async () => {
    const systemFile = join(dataDir, 'system.db')
    await killWhileLocked(systemFile, 'waiting_registration', async () => {
      // The table commits in the project's file; the registration then waits for the system file.
      for (let i = 0; i < 100 && !tableIn(projectFile, 'waiting_registration'); i++) await sleep(20)
      expect(tableIn(projectFile, 'waiting_registration')).toBe(true)
    })
    const listed = await call('GET', '/api/v1/collections')
    expect((listed.body.data as { name: string }[]).map((c) => c.name)).not.toContain('waiting_registration')
    expect(tableIn(projectFile, 'waiting_registration')).toBe(true)
    const again = await call('POST', '/api/v1/collections', body('waiting_registration'))
    expect(again.status, again.text).toBe(201)
    await expectWhole('waiting_registration')
  }, 120_000)

  it('a leftover table that holds rows is not dropped: the create is refused and nothing is registered', async () => {
    const db = new Database(projectFile, { fileMustExist: true })
    db.pragma('busy_timeout = 5000')
    db.exec('create table kept_rows (id text primary key, note text); insert into kept_rows values (1, 2)')
    db.close()
    const refused = await call('POST', '/api/v1/collections', body('kept_rows'))
    expect(refused.status, refused.text).toBe(500)
    expect(refused.body.error, refused.text).toBe('ddl_error')
    const listed = await call('GET', '/api/v1/collections')
    expect((listed.body.data as { name: string }[]).map((c) => c.name)).not.toContain('kept_rows')
    const check = new Database(projectFile, { readonly: true })
    expect(check.prepare('select count(*) as n from kept_rows').get()).toEqual({ n: 1 })
    check.close()
  }, 60_000)
})
