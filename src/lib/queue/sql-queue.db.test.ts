import type { Kysely } from 'kysely'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { runMigrations, type DbKind } from '../db/index.js'
import { ensureSchema } from '../db/postgres.js'
import { systemMigrations } from '../../migrations/system/index.js'
import type { Job, JobQueue } from './queue.js'
import { runQueueContract } from './queue-contract.js'
import { until } from './queue-contract-support.js'
import { createSqlQueue, type SqlQueueOptions } from './sql-queue.js'

/** A migrated system database as the server opens it: on PostgreSQL, scoped to its own schema. */
async function systemDb(kind: DbKind): Promise<{ fixture: DialectFixture; db: Kysely<any> }> {
  const fixture = await openFixture(kind)
  let db = fixture.db
  if (kind === 'postgres') {
    await ensureSchema(fixture.db, 'plinth')
    db = fixture.db.withSchema('plinth')
  }
  await runMigrations(db, kind, systemMigrations)
  return { fixture, db }
}

for (const kind of dialects()) {
  // One database for the contract on this dialect (each test has its own queue names), opened on first use.
  let opened: Promise<{ fixture: DialectFixture; db: Kysely<any> }> | null = null
  const database = () => (opened ??= systemDb(kind))
  afterAll(async () => {
    await (await opened)?.fixture.close()
  })

  // Shared: every opened instance takes jobs from the same tables, as instances on one PostgreSQL would.
  runQueueContract(`sql (${kind})`, {
    shared: true,
    manualTime: false,
    open: async (options) =>
      createSqlQueue({ db: (await database()).db, kind }, { ...options, shared: true, pollIntervalMs: 200 }),
    now: () => Date.now(),
    advance: async () => {},
  })

  describe(`SQL JobQueue (${kind}): what survives an instance`, () => {
    const queues: JobQueue[] = []
    let db: Kysely<any>
    async function open(options: SqlQueueOptions = {}): Promise<JobQueue> {
      db = (await database()).db
      const queue = await createSqlQueue({ db, kind }, { pollIntervalMs: 100, ...options })
      queues.push(queue)
      return queue
    }
    afterEach(async () => {
      await Promise.all(queues.splice(0).map((q) => q.close()))
    })
    const name = () => `d${Math.random().toString(36).slice(2, 10)}`

    /** A job row as a process that died while running it left it. */
    function orphan(queue: string, id: string, fields: { lockedUntil: number; stalls?: number; attempt?: number }) {
      const now = Date.now()
      return db
        .insertInto('queue_jobs')
        .values({
          id,
          queue,
          name: 'work',
          data: JSON.stringify({ id }),
          key: null,
          state: 'active',
          attempt: fields.attempt ?? 1,
          attempts: 3,
          backoff_type: null,
          backoff_ms: null,
          tick: null,
          run_at: now - 60_000,
          locked_by: 'gone',
          locked_until: fields.lockedUntil,
          stalls: fields.stalls ?? 0,
          error: null,
          created_at: now,
          updated_at: now,
        })
        .execute()
    }

    it('runs in the next instance the waiting, delayed and keyed jobs and the schedules of one that closed', async () => {
      const queue = name()
      await open()
      const raw = db
      const now = Date.now()
      await raw
        .insertInto('queue_jobs')
        .values(
          [1, 2].map((n) => ({
            id: `j${n}${queue}`,
            queue,
            name: 'work',
            data: JSON.stringify({ n }),
            key: n === 2 ? 'the-key' : null,
            state: 'waiting',
            attempt: 0,
            attempts: 1,
            backoff_type: null,
            backoff_ms: null,
            tick: null,
            run_at: n === 1 ? now : now + 300,
            locked_by: null,
            locked_until: null,
            stalls: 0,
            error: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
      const seen: number[] = []
      const second = await open()
      const jobs = await second.define<{ work: { n: number } }>(queue, {
        handlers: { work: async (job) => void seen.push(job.data.n) },
      })
      // The keyed job still holds its key in the new instance.
      expect(await jobs.add('work', { n: 3 }, { key: 'the-key' })).toBe(`j2${queue}`)
      await jobs.schedule('tick', { pattern: '* * * * * *', job: 'work', data: { n: 9 } })
      await until(() => seen.includes(1) && seen.includes(2) && seen.includes(9), 'the jobs and a tick')
      expect(seen.filter((n) => n !== 9).sort()).toEqual([1, 2])
      await second.close()
      // The schedule is a row: the next instance lists it without declaring it.
      const third = await open()
      const again = await third.define<{ work: { n: number } }>(queue, { handlers: { work: async () => {} } })
      expect((await again.schedules()).map((s) => s.id)).toEqual(['tick'])
    })

    it('takes over the running job of an instance that died once its lease lapsed, under the same attempt', async () => {
      const queue = name()
      await open({ shared: true })
      await orphan(queue, `lapsed${queue}`, { lockedUntil: Date.now() - 1 })
      await orphan(queue, `held${queue}`, { lockedUntil: Date.now() + 60_000 })
      const seen: Job[] = []
      const instance = await open({ shared: true })
      await instance.define<{ work: { id: string } }>(queue, { handlers: { work: async (job) => void seen.push(job) } })
      await until(() => seen.length === 1, 'the lapsed job')
      await new Promise((resolve) => setTimeout(resolve, 300))
      // The other's lease has not lapsed: on a shared database its instance may be alive.
      expect(seen.map((job) => [job.id, job.attempt])).toEqual([[`lapsed${queue}`, 1]])
      const left = await db.selectFrom('queue_jobs').select(['id', 'state']).where('queue', '=', queue).execute()
      expect(left).toEqual([{ id: `held${queue}`, state: 'active' }])
    })

    it('alone (embedded), takes every job an earlier process was running at once', async () => {
      const queue = name()
      await open({ shared: true })
      await orphan(queue, `held${queue}`, { lockedUntil: Date.now() + 60_000 })
      const seen: string[] = []
      const instance = await open({ shared: false })
      await instance.define<{ work: { id: string } }>(queue, {
        handlers: { work: async (job) => void seen.push(job.id) },
      })
      await until(() => seen.length === 1, 'the orphaned job')
      expect(seen).toEqual([`held${queue}`])
    })

    it('fails a job whose instance died a second time, and tells onFailed', async () => {
      const queue = name()
      await open({ shared: true })
      await orphan(queue, `twice${queue}`, { lockedUntil: 0, stalls: 1 })
      const ran: string[] = []
      const failed: Array<[string, string]> = []
      const instance = await open({ shared: true })
      await instance.define<{ work: { id: string } }>(queue, {
        handlers: { work: async (job) => void ran.push(job.id) },
        onFailed: (job, err) => void failed.push([job.id, (err as Error).message]),
      })
      await until(() => failed.length === 1, 'the failure')
      expect(ran).toEqual([])
      expect(failed[0]![1]).toMatch(/was running in an instance that stopped, 2 times/)
      await until(
        async () =>
          (await db.selectFrom('queue_jobs').select('state').where('id', '=', `twice${queue}`).executeTakeFirst())
            ?.state === 'failed',
        'the failed row',
      )
    })

    it('gives back a job cut short by close(): the next instance runs it again under the same attempt', async () => {
      const queue = name()
      const first = await open({ closeTimeoutMs: 100 })
      let started = false
      const jobs = await first.define<{ stuck: object }>(queue, {
        handlers: {
          stuck: async (job) => {
            started = true
            await new Promise((resolve) => job.signal.addEventListener('abort', resolve))
            throw new Error('aborted')
          },
        },
      })
      await jobs.add('stuck', {}, { attempts: 2 })
      await until(() => started, 'the job to start')
      await first.close()
      const attempts: number[] = []
      const second = await open()
      await second.define<{ stuck: object }>(queue, {
        handlers: { stuck: async (job) => void attempts.push(job.attempt) },
      })
      await until(() => attempts.length === 1, 'the job again')
      expect(attempts).toEqual([1])
    })
  })
}
