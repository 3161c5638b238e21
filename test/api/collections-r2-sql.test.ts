import Database from 'better-sqlite3'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buffer } from 'node:stream/consumers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/lib/clock-manual.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { s3Settings, startS3Store, type TestS3Store } from '../support/s3-store.js'
import { startSibling } from '../support/sibling.js'
import {
  accountWithGrants,
  createCollection,
  createRecord,
  field,
  getCollection,
  listedNames,
  readRecord,
  uniqueName,
} from './collections-support.js'

/**
 * storageType r2_sql (decision 036): an SQLite file kept in object storage. Writes go to the working copy of
 * the instance holding the writer claim; POST /collections/:name/publish (or the schedule) uploads it as the
 * next version; other instances read the last published version. Each test looks into object storage to see
 * what was published. On PostgreSQL (TEST_DATABASE_URL) the file is still SQLite.
 */

const records = (name: string, query = '') => `/api/v1/collections/${name}/records${query}`
const publishPath = (name: string) => `/api/v1/collections/${name}/publish`

/** The versions of a collection's file in object storage, ascending. */
async function storedVersions(s: TestServer, collectionId: string): Promise<number[]> {
  const keys = await s.app.storage.list(`r2-sql/${s.app.defaultProject.id}/${collectionId}/`, 1000)
  return keys.map((k) => Number(k.split('/').at(-1)!.replace('.db', ''))).sort((a, b) => a - b)
}

/** The rows of the collection's table in one published version, read from the object itself. */
async function publishedRows(
  s: TestServer,
  collectionId: string,
  table: string,
  version: number,
): Promise<Record<string, unknown>[]> {
  const body = await s.app.storage.get(`r2-sql/${s.app.defaultProject.id}/${collectionId}/${version}.db`)
  expect(body, `version ${version} is stored`).not.toBeNull()
  const dir = mkdtempSync(join(tmpdir(), 'r2-sql-check-'))
  try {
    const file = join(dir, 'v.db')
    writeFileSync(file, await buffer(body!))
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare(`select * from "${table}" order by rowid`).all() as Record<string, unknown>[]
    } finally {
      db.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * These tests publish on demand and count versions: the schedule (every minute; on Redis one schedule shared by
 * every instance, so every instance of a test sets this) fires once a year instead, never during a test.
 */
const offSchedule = { publishPattern: '0 0 1 1 *' }

function expectPublished(reply: Reply, published: boolean, version: number): void {
  expect(reply.status, reply.text).toBe(200)
  expect(reply.body).toEqual({ published, version, sizeBytes: expect.any(Number), publishedAt: expect.any(Number) })
}

describe('r2_sql on one instance', () => {
  let server: TestServer
  let owner: Account
  beforeAll(async () => {
    server = await startServer({}, { r2Sql: offSchedule })
    owner = await signUpOwner(server)
  })
  afterAll(async () => {
    await server?.stop()
  })

  const make = async (name: string, extra: Record<string, unknown> = {}) =>
    createCollection(server, owner.token, {
      name,
      storageType: 'r2_sql',
      fields: [field('title', 'text'), field('n', 'integer')],
      ...extra,
    })
  const publish = (name: string, token = owner.token) => server.request('POST', publishPath(name), { token })

  it('is made with version 1 published (an empty table), under a database of its own; a chosen databaseId is 400', async () => {
    const name = uniqueName('r2_made')
    const created = await make(name)
    expect(created).toMatchObject({ storageType: 'r2_sql', databaseId: `collection_${created.id}` })
    expect(await storedVersions(server, created.id)).toEqual([1])
    expect(await publishedRows(server, created.id, name, 1)).toEqual([])
    expect((await server.request('GET', records(name), { token: owner.token })).body).toMatchObject({
      data: [],
      total: 0,
    })
    const chosen = await server.request('POST', '/api/v1/collections', {
      token: owner.token,
      body: { name: uniqueName('r2_chosen'), storageType: 'r2_sql', databaseId: 'main', fields: [] },
    })
    expect(chosen.status, chosen.text).toBe(400)
    expect(chosen.body).toMatchObject({ error: 'invalid_request', details: { databaseId: 'main' } })
  })

  it('publish uploads the working copy as the next version; with nothing new it publishes nothing', async () => {
    const name = uniqueName('r2_pub')
    const { id } = await make(name)
    const a = await createRecord(server, owner.token, name, { title: 'alpha', n: 1 })
    const b = await createRecord(server, owner.token, name, { title: 'beta', n: 2 })
    // The writer reads its own writes before they are published.
    expect(await readRecord(server, owner.token, name, a.id)).toMatchObject({ title: 'alpha' })
    expect(await storedVersions(server, id)).toEqual([1])
    expectPublished(await publish(name), true, 2)
    expect((await publishedRows(server, id, name, 2)).map((r) => r.title).sort()).toEqual(['alpha', 'beta'])
    expectPublished(await publish(name), false, 2)
    expect(await storedVersions(server, id)).toEqual([1, 2])

    expect(
      (await server.request('PATCH', records(name, `/${b.id}`), { token: owner.token, body: { title: 'beta two' } }))
        .status,
    ).toBe(200)
    expect(
      (await server.request('DELETE', records(name, `/${a.id}?permanent=true`), { token: owner.token })).status,
    ).toBe(200)
    expectPublished(await publish(name), true, 3)
    expect((await publishedRows(server, id, name, 3)).map((r) => r.title)).toEqual(['beta two'])
    // Version 2 stays (a reader may be fetching it); the one before the previous goes.
    await createRecord(server, owner.token, name, { title: 'gamma', n: 3 })
    expectPublished(await publish(name), true, 4)
    expect(await storedVersions(server, id)).toEqual([3, 4])
  })

  it('a schema change is published before it is answered', async () => {
    const name = uniqueName('r2_schema')
    const created = await make(name)
    await createRecord(server, owner.token, name, { title: 'kept' })
    const detail = await getCollection(server, owner.token, name)
    const patched = await server.request('PATCH', `/api/v1/collections/${name}`, {
      token: owner.token,
      body: { fields: [...detail.fields, field('extra', 'text')] },
    })
    expect(patched.status, patched.text).toBe(200)
    expect(await storedVersions(server, created.id)).toEqual([1, 2])
    const [row] = await publishedRows(server, created.id, name, 2)
    expect(row).toMatchObject({ title: 'kept', extra: null })
  })

  it('publish is for whoever may write records there: a reader is refused (403) and nothing is published', async () => {
    const name = uniqueName('r2_perm')
    const { id } = await make(name)
    await createRecord(server, owner.token, name, { title: 'unpublished' })
    const reader = await accountWithGrants(server, owner.token, [{ resource: `collections/${name}`, action: 'read' }])
    const refused = await publish(name, reader.token)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error).toBe('forbidden')
    expect(await storedVersions(server, id)).toEqual([1])
    const anonymous = await server.request('POST', publishPath(name))
    expect(anonymous.status).toBe(401)
    expect(await storedVersions(server, id)).toEqual([1])
    // A caller who may only create records there may publish.
    const creator = await accountWithGrants(server, owner.token, [
      { resource: `collections/${name}`, action: 'create' },
    ])
    expectPublished(await publish(name, creator.token), true, 2)
  })

  it('publish of another storage type is 400; of a missing collection 404', async () => {
    const name = uniqueName('r2_d1')
    await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    const d1 = await publish(name)
    expect(d1.status, d1.text).toBe(400)
    expect(d1.body).toMatchObject({ error: 'invalid_request', details: { storageType: 'd1' } })
    const missing = await publish('no_such_collection')
    expect(missing.status).toBe(404)
    expect(missing.body.error).toBe('collection_not_found')
  })

  it('deleting the collection removes its versions from object storage and its local copies', async () => {
    const name = uniqueName('r2_gone')
    const { id } = await make(name)
    await createRecord(server, owner.token, name, { title: 'x' })
    expectPublished(await publish(name), true, 2)
    expect((await server.request('DELETE', `/api/v1/collections/${name}`, { token: owner.token })).status).toBe(200)
    expect(await storedVersions(server, id)).toEqual([])
    expect(await listedNames(server, owner.token)).not.toContain(name)
    expect(existsSync(join(server.dataDir, 'r2-sql', 'published', server.app.defaultProject.id, id))).toBe(false)
    // The same name starts afresh.
    await make(name)
    expect((await server.request('GET', records(name), { token: owner.token })).body.total).toBe(0)
  })

  it('unpublished writes survive a restart: closing publishes them', async () => {
    let instance = await startServer({}, { r2Sql: offSchedule })
    try {
      const account = await signUpOwner(instance)
      const name = uniqueName('r2_restart')
      const created = await createCollection(instance, account.token, {
        name,
        storageType: 'r2_sql',
        fields: [field('title', 'text')],
      })
      const r = await createRecord(instance, account.token, name, { title: 'before restart' })
      instance = await instance.restart()
      expect(await readRecord(instance, account.token, name, r.id)).toMatchObject({ title: 'before restart' })
      expect(await storedVersions(instance, created.id)).toEqual([1, 2])
    } finally {
      await instance.stop()
    }
  })
})

/** Polls `check` until it holds (a generous 20 s deadline: the machine may be slow; nothing here is timed). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('r2_sql on the schedule', () => {
  it('each minute the instance holding writes publishes them, and gives the claim up once 30 s passed without a write', async () => {
    const clock = createManualClock()
    // Alone (no Redis): the in-process queue's schedule runs on the manual clock, and the instance is `local`.
    const server = await startServer({ REDIS_URL: '' }, { clock })
    try {
      const account = await signUpOwner(server)
      const name = uniqueName('r2_tick')
      const { id } = await createCollection(server, account.token, {
        name,
        storageType: 'r2_sql',
        fields: [field('title', 'text')],
      })
      await createRecord(server, account.token, name, { title: 'ticked' })
      const writer = async () =>
        (
          await server.app.registry.system.db
            .selectFrom('r2_sql_files')
            .select('writer')
            .where('collection_id', '=', id)
            .executeTakeFirstOrThrow()
        ).writer
      expect(await writer()).toBe('local')
      expect(await storedVersions(server, id)).toEqual([1])
      // Past the next minute: the schedule's job asks every instance to publish what it holds.
      await clock.advance(61_000)
      await eventually('version 2 published', async () => (await storedVersions(server, id)).includes(2))
      expect((await publishedRows(server, id, name, 2)).map((r) => r.title)).toEqual(['ticked'])
      // The tick that published may have run less than 30 s after the write (the minute's edge came first):
      // the claim goes at the latest on the next tick, a minute on, with nothing written in between.
      await clock.advance(61_000)
      await eventually('the claim given up', async () => (await writer()) === null)
      // Reads now come from the published file: the same record.
      expect((await server.request('GET', records(name), { token: account.token })).body.total).toBe(1)
    } finally {
      await server.stop()
    }
  })
})

const databaseUrl = process.env.TEST_DATABASE_URL
const redisUrl = process.env.TEST_REDIS_URL

describe.runIf(Boolean(databaseUrl && redisUrl))(
  'r2_sql on two instances sharing object storage (runs only when TEST_DATABASE_URL and TEST_REDIS_URL are both set)',
  () => {
    let store: TestS3Store
    let a: TestServer
    let b: TestServer
    let owner: Account
    beforeAll(async () => {
      store = await startS3Store()
      const env = { REDIS_URL: redisUrl ?? '', ...s3Settings(store) }
      a = await startServer(env, { r2Sql: offSchedule })
      b = await startSibling(a, s3Settings(store), { r2Sql: offSchedule })
      owner = await signUpOwner(a)
    })
    afterAll(async () => {
      await b?.stop()
      await a?.stop()
      await store?.stop()
    })

    const get = (s: TestServer, name: string, id: string) =>
      s.request('GET', records(name, `/${id}`), { token: owner.token })
    const total = async (s: TestServer, name: string) =>
      (await s.request('GET', records(name), { token: owner.token })).body.total

    it('a write on A is read on B once published; before that B serves the previous file; B publishes through A', async () => {
      const name = uniqueName('r2_two')
      await createCollection(a, owner.token, { name, storageType: 'r2_sql', fields: [field('title', 'text')] })
      const first = await createRecord(a, owner.token, name, { title: 'first' })
      // Not published yet: B reads version 1, the empty table.
      expect((await get(b, name, first.id)).status).toBe(404)
      expect(await total(b, name)).toBe(0)
      expectPublished(await a.request('POST', publishPath(name), { token: owner.token }), true, 2)
      expect((await get(b, name, first.id)).body.data).toMatchObject({ title: 'first' })

      const second = await createRecord(a, owner.token, name, { title: 'second' })
      // A reads its own write; B still serves version 2.
      expect((await get(a, name, second.id)).status).toBe(200)
      expect(await total(a, name)).toBe(2)
      expect((await get(b, name, second.id)).status).toBe(404)
      expect(await total(b, name)).toBe(1)
      const listedOnB = await b.request('GET', records(name), { token: owner.token })
      const staleTag = listedOnB.headers.get('etag')
      expect(staleTag).toBeTruthy()
      // A holds the writer claim: B may not write until A's writes are published and the claim is given up.
      const refused = await b.request('POST', records(name), { token: owner.token, body: { title: 'on b' } })
      expect(refused.status, refused.text).toBe(409)
      expect(refused.body).toMatchObject({ error: 'conflict', details: { reason: 'writer_elsewhere' } })
      expect(await total(a, name)).toBe(2)
      // Publishing on B asks A, which holds the writes.
      expectPublished(await b.request('POST', publishPath(name), { token: owner.token }), true, 3)
      expect((await get(b, name, second.id)).body.data).toMatchObject({ title: 'second' })
      // No write happened since B's last list, but B reads another file now: its cached total and its ETag
      // (keyed by the copy read) do not survive the publish.
      const fresh = await b.request('GET', records(name), {
        token: owner.token,
        headers: { 'if-none-match': staleTag! },
      })
      expect(fresh.status, fresh.text).toBe(200)
      expect(fresh.body.total).toBe(2)
      expect(fresh.headers.get('etag')).not.toBe(staleTag)
    })

    it("the claim moves: once C has published and gone quiet, D may write; C then reads D's writes only once D publishes, and back", async () => {
      // Instances whose publish gives the claim up at once (no quiet period), so the test needs no waiting.
      const c = await startSibling(a, s3Settings(store), { r2Sql: { ...offSchedule, quietMs: 0 } })
      const d = await startSibling(a, s3Settings(store), { r2Sql: { ...offSchedule, quietMs: 0 } })
      try {
        const name = uniqueName('r2_moves')
        await createCollection(c, owner.token, { name, storageType: 'r2_sql', fields: [field('title', 'text')] })
        const onC = await createRecord(c, owner.token, name, { title: 'written on c' })
        expectPublished(await c.request('POST', publishPath(name), { token: owner.token }), true, 2)
        // C gave the claim up: D takes it, starting from version 2.
        const onD = await createRecord(d, owner.token, name, { title: 'written on d' })
        expect(await total(d, name)).toBe(2)
        expect((await get(c, name, onD.id)).status).toBe(404)
        expect((await get(c, name, onC.id)).status).toBe(200)
        const refused = await c.request('PATCH', records(name, `/${onC.id}`), {
          token: owner.token,
          body: { title: 'on c again' },
        })
        expect(refused.status, refused.text).toBe(409)
        expectPublished(await d.request('POST', publishPath(name), { token: owner.token }), true, 3)
        expect((await get(c, name, onD.id)).body.data).toMatchObject({ title: 'written on d' })
        // And back to C, whose working copy was left at version 2: it starts again from version 3.
        expect(
          (await c.request('PATCH', records(name, `/${onC.id}`), { token: owner.token, body: { title: 'on c again' } }))
            .status,
        ).toBe(200)
        expect(await total(c, name)).toBe(2)
        expectPublished(await c.request('POST', publishPath(name), { token: owner.token }), true, 4)
        expect((await get(d, name, onC.id)).body.data).toMatchObject({ title: 'on c again' })
        expect((await get(d, name, onD.id)).body.data).toMatchObject({ title: 'written on d' })
      } finally {
        await d.stop()
        await c.stop()
      }
    })
  },
)
