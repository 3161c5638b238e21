import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ImportPacePoint } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { startSibling } from '../support/sibling.js'
import { createCollection, expectError, freshName } from './records-fixtures.js'

// A chunk's effect on its import job is atomic with its rows (decision 016, docs/import-export.md § Import
// jobs): a crash after the rows commit loses no count, a resent chunk is recognised and answered with its
// first outcome, and a chunk racing finalize is either counted before it or refused with 409, writing nothing.
// Crashes and races are placed exactly with the importPace hook (AppOptions): it fails or holds a write at
// one of its points. A real SIGKILL of a server process is in records-import-kill.test.ts.

/** Fails or holds the next import write that reaches a point; every other write passes. */
function createTrap() {
  let armed: { point: ImportPacePoint; fail: boolean; reached: () => void; wait: Promise<void> } | null = null
  return {
    pace: async (point: ImportPacePoint): Promise<void> => {
      const trap = armed
      if (!trap || trap.point !== point) return
      armed = null
      trap.reached()
      if (trap.fail) throw new Error(`injected crash at ${point}`)
      await trap.wait
    },
    /** The next write reaching `point` fails there (as if the process died): the client gets a 500. */
    fail(point: ImportPacePoint): void {
      armed = { point, fail: true, reached: () => {}, wait: Promise.resolve() }
    },
    /** The next write reaching `point` waits there until released. */
    reset(): void {
      armed = null
    },
    hold(point: ImportPacePoint): { reached: Promise<void>; release: () => void } {
      let release = () => {}
      let reached = () => {}
      const wait = new Promise<void>((resolve) => (release = resolve))
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve))
      armed = { point, fail: false, reached, wait }
      return { reached: reachedPromise, release }
    },
  }
}

const trap = createTrap()
let server: TestServer
let owner: Account
const fields = [
  { name: 'n', type: 'integer', required: true, unique: true },
  { name: 'title', type: 'text', required: false },
]
const plainFields = [
  { name: 'n', type: 'integer', required: true },
  { name: 'title', type: 'text', required: false },
]

const ndjsonOf = (from: number, count: number, extra: (n: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({ n: from + i, title: `row ${from + i}`, ...extra(from + i) }),
  ).join('\n')
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

function sendChunk(on: TestServer, collection: string, jobId: string, body: string): Promise<Reply> {
  return on.request('POST', `/api/v1/collections/${collection}/records/import-ndjson?jobId=${jobId}`, {
    token: owner.token,
    rawBody: body,
    headers: { 'content-type': 'application/x-ndjson' },
  })
}
const jobPath = (collection: string, jobId = '', rest = '') =>
  `/api/v1/collections/${collection}/records/import-jobs${jobId ? `/${jobId}` : ''}${rest}`

async function startJob(collection: string): Promise<string> {
  const reply = await server.request('POST', jobPath(collection), { token: owner.token, body: {} })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.jobId
}
async function job(collection: string, jobId: string, on = server): Promise<Record<string, any>> {
  const reply = await on.request('GET', jobPath(collection, jobId), { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}
function finalize(collection: string, jobId: string, on = server): Promise<Reply> {
  return on.request('POST', jobPath(collection, jobId, '/finalize'), { token: owner.token })
}
/** The `n` of every stored record (soft-deleted ones too), ascending; duplicates would show twice. */
async function storedNs(collection: string): Promise<number[]> {
  const reply = await server.request('GET', `/api/v1/collections/${collection}/records/export?format=json`, {
    token: owner.token,
  })
  expect(reply.status, reply.text).toBe(200)
  return (reply.body as { n: number }[]).map((r) => r.n).sort((a, b) => a - b)
}

beforeAll(async () => {
  server = await startServer({}, { importPace: trap.pace })
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})
beforeEach(() => trap.reset())

describe('a crash between a chunk’s commit and its answer (item 18)', () => {
  it('the job counts the chunk with its rows; after a restart the resent chunk answers its first outcome and is not counted again', async () => {
    const name = await createCollection(server, owner.token, freshName('crash'), fields)
    const jobId = await startJob(name)
    const first = await sendChunk(server, name, jobId, ndjsonOf(1, 1000))
    expect(first.body).toMatchObject({ imported: 1000, failed: 0 })
    expect(first.headers.get('idempotent-replayed')).toBeNull()

    const second = ndjsonOf(1001, 1000)
    trap.fail('committed')
    const crashed = await sendChunk(server, name, jobId, second)
    expectError(crashed, 500, 'internal')
    server = await server.restart()

    // The rows and the job's tallies committed together.
    expect(await storedNs(name)).toEqual(range(1, 2000))
    expect(await job(name, jobId)).toMatchObject({
      status: 'pending',
      imported: 2000,
      failed: 0,
      chunks: 2,
      errors: [],
    })

    // The client, having seen no answer, sends the chunk again: the first outcome, nothing written twice.
    const resent = await sendChunk(server, name, jobId, second)
    expect(resent.status, resent.text).toBe(200)
    expect(resent.headers.get('idempotent-replayed')).toBe('true')
    expect(resent.body).toMatchObject({
      imported: 1000,
      failed: 0,
      total: 1000,
      truncated: false,
      errors: [],
      staleSearchIndexes: [],
    })
    expect(resent.body.records.map((r: any) => r.n)).toEqual(range(1001, 1000))
    expect(await storedNs(name)).toEqual(range(1, 2000))
    expect(await job(name, jobId)).toMatchObject({ imported: 2000, failed: 0, chunks: 2 })

    const done = await finalize(name, jobId)
    expect(done.status, done.text).toBe(200)
    expect(done.body).toMatchObject({ status: 'complete', imported: 2000, failed: 0, chunks: 2 })
  })

  it('without unique fields the resent chunk stores no second copy', async () => {
    const name = await createCollection(server, owner.token, freshName('crashplain'), plainFields)
    const jobId = await startJob(name)
    const body = ndjsonOf(1, 3)
    trap.fail('committed')
    expectError(await sendChunk(server, name, jobId, body), 500, 'internal')
    const resent = await sendChunk(server, name, jobId, body)
    expect(resent.body).toMatchObject({ imported: 3, failed: 0, total: 3 })
    expect(await storedNs(name)).toEqual([1, 2, 3])
    expect(await job(name, jobId)).toMatchObject({ imported: 3, failed: 0, chunks: 1 })
  })

  it('a resent chunk with refused lines answers the same errors and counts them once', async () => {
    const name = await createCollection(server, owner.token, freshName('crasherr'), fields)
    const jobId = await startJob(name)
    const body = [
      JSON.stringify({ n: 1 }),
      JSON.stringify({ title: 'no n' }),
      'not json',
      JSON.stringify({ n: 1 }),
    ].join('\n')
    trap.fail('committed')
    expectError(await sendChunk(server, name, jobId, body), 500, 'internal')
    const resent = await sendChunk(server, name, jobId, body)
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body).toMatchObject({ imported: 1, failed: 3, total: 4 })
    expect(resent.body.errors).toEqual([
      { line: 2, code: 'missing_field', message: expect.any(String), field: 'n' },
      { line: 3, code: 'invalid_request', message: expect.any(String) },
      { line: 4, code: 'already_exists', message: expect.any(String), field: 'n' },
    ])
    // An all-refused chunk, resent, is counted once too.
    const refused = JSON.stringify({ title: 'still no n' })
    expect((await sendChunk(server, name, jobId, refused)).body).toMatchObject({ imported: 0, failed: 1 })
    expect((await sendChunk(server, name, jobId, refused)).body).toMatchObject({ imported: 0, failed: 1 })
    expect(await job(name, jobId)).toMatchObject({
      imported: 1,
      failed: 4,
      chunks: 2,
      errors: [
        { chunk: 1, line: 2, code: 'missing_field' },
        { chunk: 1, line: 3, code: 'invalid_request' },
        { chunk: 1, line: 4, code: 'already_exists' },
        { chunk: 2, line: 1, code: 'missing_field' },
      ],
    })
    expect(await storedNs(name)).toEqual([1])
  })

  it('a chunk is known by its body: another body is a new chunk, the same body to another job is new there', async () => {
    const name = await createCollection(server, owner.token, freshName('chunkkey'), plainFields)
    const jobA = await startJob(name)
    const jobB = await startJob(name)
    expect((await sendChunk(server, name, jobA, ndjsonOf(1, 2))).body).toMatchObject({ imported: 2 })
    expect((await sendChunk(server, name, jobA, ndjsonOf(1, 2) + '\n')).body).toMatchObject({ imported: 2 })
    expect((await sendChunk(server, name, jobB, ndjsonOf(1, 2))).body).toMatchObject({ imported: 2 })
    expect(await job(name, jobA)).toMatchObject({ imported: 4, chunks: 2 })
    expect(await job(name, jobB)).toMatchObject({ imported: 2, chunks: 1 })
    expect(await storedNs(name)).toEqual([1, 1, 1, 2, 2, 2])
  })

  it('after finalize, a chunk the job holds still answers its outcome; a new one is 409 and writes nothing', async () => {
    const name = await createCollection(server, owner.token, freshName('afterfinal'), fields)
    const jobId = await startJob(name)
    const body = ndjsonOf(1, 5)
    expect((await sendChunk(server, name, jobId, body)).body).toMatchObject({ imported: 5 })
    expect((await finalize(name, jobId)).body).toMatchObject({ status: 'complete', imported: 5, chunks: 1 })
    const resent = await sendChunk(server, name, jobId, body)
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body).toMatchObject({ imported: 5, failed: 0 })
    expectError(await sendChunk(server, name, jobId, ndjsonOf(6, 5)), 409, 'conflict')
    expect(await storedNs(name)).toEqual(range(1, 5))
    expect(await job(name, jobId)).toMatchObject({ status: 'complete', imported: 5, chunks: 1 })
  })
})

describe('a remote collection: the job’s ledger is in the binding’s database, beside the rows', () => {
  let pgTarget: { url: string; drop: () => Promise<void> } | null = null
  beforeAll(async () => {
    if (testDatabaseUrl()) pgTarget = await createTestDatabase(testDatabaseUrl()!)
  })
  afterAll(async () => {
    await pgTarget?.drop()
  })
  const kinds = [
    { kind: 'sqlite', enabled: () => true, body: () => ({ kind: 'sqlite' }) },
    {
      kind: 'postgres',
      enabled: () => testDatabaseUrl() !== null,
      body: () => ({ kind: 'postgres', url: pgTarget!.url }),
    },
  ]
  for (const { kind, enabled, body } of kinds) {
    it.runIf(enabled())(
      `on a ${kind} binding: a crash after the commit loses no count, the resent chunk is recognised`,
      async () => {
        const binding = await server.request('POST', '/api/v1/databases', {
          token: owner.token,
          body: { name: freshName(`ledger_${kind}`), ...body() },
        })
        expect(binding.status, binding.text).toBe(201)
        const databaseId = binding.body.data.id
        const name = await createCollection(server, owner.token, freshName('remote'), fields, {
          storageType: 'remote',
          databaseId,
        })
        const jobId = await startJob(name)
        const chunk = ndjsonOf(1, 20)
        trap.fail('committed')
        expectError(await sendChunk(server, name, jobId, chunk), 500, 'internal')
        expect(await job(name, jobId)).toMatchObject({ imported: 20, chunks: 1 })
        expect((await sendChunk(server, name, jobId, chunk)).headers.get('idempotent-replayed')).toBe('true')
        expect(await storedNs(name)).toEqual(range(1, 20))
        expect((await finalize(name, jobId)).body).toMatchObject({ status: 'complete', imported: 20, chunks: 1 })

        const there = await server.app.registry.get(server.app.defaultProject.id, databaseId)
        const held = await there.db
          .selectFrom('_plinth_import_chunks')
          .select(['seq'])
          .where('job_id', '=', jobId)
          .execute()
        expect(held).toEqual([{ seq: 1 }])
        const entry = await there.db
          .selectFrom('_plinth_import_jobs')
          .select(['status', 'imported'])
          .where('job_id', '=', jobId)
          .executeTakeFirst()
        expect(entry).toMatchObject({ status: 'complete', imported: 20 })
      },
    )
  }
})

describe('a chunk racing finalize (item 19)', () => {
  it('finalized while the chunk is checked but not yet written: the chunk is 409 and writes nothing', async () => {
    const name = await createCollection(server, owner.token, freshName('racebefore'), fields)
    const jobId = await startJob(name)
    expect((await sendChunk(server, name, jobId, ndjsonOf(1, 10))).body).toMatchObject({ imported: 10 })
    const held = trap.hold('validated')
    const chunk = sendChunk(server, name, jobId, ndjsonOf(11, 10))
    await held.reached
    const done = await finalize(name, jobId)
    expect(done.body).toMatchObject({ status: 'complete', imported: 10, chunks: 1 })
    held.release()
    expectError(await chunk, 409, 'conflict')
    expect(await storedNs(name)).toEqual(range(1, 10))
    expect(await job(name, jobId)).toMatchObject({ status: 'complete', imported: 10, failed: 0, chunks: 1 })
  })

  it('finalize while the chunk’s rows are written: finalize waits for it, and the chunk is counted', async () => {
    const name = await createCollection(server, owner.token, freshName('raceduring'), fields)
    const jobId = await startJob(name)
    const held = trap.hold('written')
    const chunk = sendChunk(server, name, jobId, ndjsonOf(1, 10))
    await held.reached
    const done = finalize(name, jobId)
    // Give finalize every chance to overtake the held chunk; it must not (the outcome, not the time, is checked).
    await new Promise((resolve) => setTimeout(resolve, 300))
    held.release()
    const landed = await chunk
    expect(landed.status, landed.text).toBe(200)
    expect(landed.body).toMatchObject({ imported: 10 })
    expect((await done).body).toMatchObject({ status: 'complete', imported: 10, chunks: 1 })
    expect(await storedNs(name)).toEqual(range(1, 10))
  })

  it('many chunks and a finalize at once: each chunk is counted (its rows stored) or 409 (nothing stored)', async () => {
    const name = await createCollection(server, owner.token, freshName('racemany'), fields)
    const jobId = await startJob(name)
    // On PostgreSQL with Redis, half of the chunks and the finalize go through a second instance.
    const other =
      server.app.config.database.kind === 'postgres' && server.app.config.redisUrl
        ? await startSibling(server, {})
        : server
    try {
      const size = 50
      const count = 30
      const chunks = range(0, count).map((i) =>
        sendChunk(i % 2 ? other : server, name, jobId, ndjsonOf(i * size + 1, size)),
      )
      await new Promise((resolve) => setTimeout(resolve, 20))
      const done = await finalize(name, jobId, other)
      expect(done.status, done.text).toBe(200)
      const replies = await Promise.all(chunks)

      const stored = new Set(await storedNs(name))
      let imported = 0
      let counted = 0
      replies.forEach((reply, i) => {
        const ns = range(i * size + 1, size)
        if (reply.status === 200) {
          expect(reply.body).toMatchObject({ imported: size, failed: 0 })
          imported += reply.body.imported
          counted++
          for (const n of ns) expect(stored.has(n), `chunk ${i} answered 200: n=${n} must be stored`).toBe(true)
        } else {
          expectError(reply, 409, 'conflict')
          for (const n of ns) expect(stored.has(n), `chunk ${i} answered 409: n=${n} must not be stored`).toBe(false)
        }
      })
      expect(stored.size).toBe(imported)
      expect(done.body).toMatchObject({ status: 'complete', imported, failed: 0, chunks: counted })
      expect(await job(name, jobId)).toMatchObject({ status: 'complete', imported, failed: 0, chunks: counted })
    } finally {
      if (other !== server) await other.stop()
    }
  })
})
