import type { Kysely } from 'kysely'
import { lockTransaction, runCompiled, type DbKind } from '../db/index.js'
import type { Backoff, QueueDepth } from './queue.js'

export interface JobRow {
  id: string
  queue: string
  name: string
  data: string
  key: string | null
  state: 'waiting' | 'active' | 'failed'
  attempt: number
  attempts: number
  backoff_type: Backoff['type'] | null
  backoff_ms: number | null
  tick: number | null
  run_at: number
  locked_by: string | null
  locked_until: number | null
  stalls: number
  error: string | null
  created_at: number
  updated_at: number
}

export interface ScheduleRow {
  queue: string
  id: string
  pattern: string
  timezone: string
  job: string
  data: string
  attempts: number
  backoff_type: Backoff['type'] | null
  backoff_ms: number | null
  next_at: number | null
  last_tick: number | null
  updated_at: number
}

/** A new job: what `add` and a schedule's tick write. */
export type NewJob = Pick<
  JobRow,
  'id' | 'queue' | 'name' | 'data' | 'key' | 'attempts' | 'backoff_type' | 'backoff_ms' | 'tick' | 'run_at'
>

type Tables = { queue_jobs: JobRow; queue_schedules: ScheduleRow }

/**
 * SQL of `queue_jobs` and `queue_schedules` (migration 0026) on the system database; the SQL queue is
 * their only user. The one dialect difference, PostgreSQL's `for update skip locked` when taking jobs,
 * lives here: SQLite's writes already exclude each other. The statements of every job run through
 * `runCompiled` (on SQLite straight on the connection, writes sharing commits); transactions through Kysely.
 */
export function createQueueStore(systemDb: Kysely<any>, kind: DbKind) {
  const db = systemDb as Kysely<Tables>

  function jobValues(job: NewJob, now: number): JobRow {
    return {
      ...job,
      state: 'waiting',
      attempt: 0,
      locked_by: null,
      locked_until: null,
      stalls: 0,
      error: null,
      created_at: now,
      updated_at: now,
    }
  }

  return {
    /**
     * Adds a job and answers its id; with a key held by an unfinished job of the queue, adds nothing and
     * answers that job's id.
     */
    async insert(job: NewJob, now: number): Promise<string> {
      if (job.key === null) {
        await runCompiled(db, db.insertInto('queue_jobs').values(jobValues(job, now)).compile())
        return job.id
      }
      // The holder may finish between the insert that conflicts and the read: then insert again.
      for (let i = 0; i < 5; i++) {
        const [inserted] = await runCompiled(
          db,
          db
            .insertInto('queue_jobs')
            .values(jobValues(job, now))
            .onConflict((oc) => oc.columns(['queue', 'key']).doNothing())
            .returning('id')
            .compile(),
        )
        if (inserted) return inserted.id
        const [holder] = await runCompiled(
          db,
          db.selectFrom('queue_jobs').select('id').where('queue', '=', job.queue).where('key', '=', job.key).compile(),
        )
        if (holder) return holder.id
      }
      throw new Error(`Queue "${job.queue}": the key ${JSON.stringify(job.key)} kept changing hands`)
    },

    /**
     * Leases up to `limit` due jobs of the queue to `instance` until `until`: waiting jobs whose time has
     * come (their attempt counted), and active ones whose lease lapsed (their instance is gone: a stall,
     * counted; the attempt runs again under the same number). Oldest first. `now` is the queue's clock (run
     * times); `leaseNow` and `until` are Node's (leases: is the process alive).
     */
    async claim(
      queue: string,
      instance: string,
      limit: number,
      now: number,
      leaseNow: number,
      until: number,
    ): Promise<JobRow[]> {
      let due = db
        .selectFrom('queue_jobs')
        .select('id')
        .where('queue', '=', queue)
        .where((eb) =>
          eb.or([
            eb.and([eb('state', '=', 'waiting'), eb('run_at', '<=', now)]),
            eb.and([eb('state', '=', 'active'), eb('locked_until', '<', leaseNow)]),
          ]),
        )
        .orderBy('run_at')
        .orderBy('id')
        .limit(limit)
      if (kind === 'postgres') due = due.forUpdate().skipLocked()
      const claim = db
        .updateTable('queue_jobs')
        .set((eb) => ({
          attempt: eb
            .case()
            .when('state', '=', 'waiting')
            .then(eb('attempt', '+', 1))
            .else(eb.ref('attempt'))
            .end(),
          stalls: eb
            .case()
            .when('state', '=', 'active')
            .then(eb('stalls', '+', 1))
            .else(eb.ref('stalls'))
            .end(),
          state: 'active',
          locked_by: instance,
          locked_until: until,
          updated_at: now,
        }))
        .where('id', 'in', due)
        .returningAll()
      return runCompiled(db, claim.compile())
    },

    /** Deletes a job this instance still holds (it completed); false when its lease went to another. */
    async complete(id: string, instance: string): Promise<boolean> {
      const deleted = await runCompiled(
        db,
        db
          .deleteFrom('queue_jobs')
          .where('id', '=', id)
          .where('state', '=', 'active')
          .where('locked_by', '=', instance)
          .returning('id')
          .compile(),
      )
      return deleted.length > 0
    },

    /** Puts a held job back to wait until `runAt` for its next attempt. */
    async retry(id: string, instance: string, runAt: number, error: string, now: number): Promise<boolean> {
      return held(id, instance, {
        state: 'waiting',
        run_at: runAt,
        locked_by: null,
        locked_until: null,
        error,
        updated_at: now,
      })
    },

    /** Marks a held job failed for good; its key is freed. */
    async fail(id: string, instance: string, error: string, now: number): Promise<boolean> {
      return held(id, instance, {
        state: 'failed',
        key: null,
        locked_by: null,
        locked_until: null,
        error,
        updated_at: now,
      })
    },

    /** Gives back held jobs whose runs were cut short by close(): they wait again, the attempt not counted. */
    async release(ids: readonly string[], instance: string, now: number): Promise<void> {
      if (ids.length === 0) return
      await db
        .updateTable('queue_jobs')
        .set((eb) => ({
          state: 'waiting',
          attempt: eb('attempt', '-', 1),
          run_at: now,
          locked_by: null,
          locked_until: null,
          updated_at: now,
        }))
        .where('id', 'in', [...ids])
        .where('state', '=', 'active')
        .where('locked_by', '=', instance)
        .execute()
    },

    /** Extends the lease of every job this instance holds. */
    async renew(instance: string, until: number): Promise<void> {
      await runCompiled(
        db,
        db
          .updateTable('queue_jobs')
          .set({ locked_until: until })
          .where('state', '=', 'active')
          .where('locked_by', '=', instance)
          .compile(),
      )
    },

    /** Ends the leases of every other instance at once (an instance alone: they are all an earlier process's). */
    async expireOthers(instance: string): Promise<number> {
      const result = await db
        .updateTable('queue_jobs')
        .set({ locked_until: 0 })
        .where('state', '=', 'active')
        .where('locked_by', '<>', instance)
        .executeTakeFirst()
      return Number(result.numUpdatedRows)
    },

    /** Deletes failed jobs last touched before `before`; how many went. */
    async pruneFailed(before: number): Promise<number> {
      const result = await db
        .deleteFrom('queue_jobs')
        .where('state', '=', 'failed')
        .where('updated_at', '<', before)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },

    /**
     * When something of the queue falls due: `run`, the earliest waiting job or tick (the queue's clock);
     * `lease`, the earliest lease of a running job to lapse (Node's clock). Null when there is none.
     */
    async nextDue(queue: string): Promise<{ run: number | null; lease: number | null }> {
      const [row] = await runCompiled(
        db,
        db
          .selectNoFrom((eb) => [
            eb
              .selectFrom('queue_jobs')
              .select((e) => e.fn.min('run_at').as('v'))
              .where('queue', '=', queue)
              .where('state', '=', 'waiting')
              .as('waiting'),
            eb
              .selectFrom('queue_jobs')
              .select((e) => e.fn.min('locked_until').as('v'))
              .where('queue', '=', queue)
              .where('state', '=', 'active')
              .as('lease'),
            eb
              .selectFrom('queue_schedules')
              .select((e) => e.fn.min('next_at').as('v'))
              .where('queue', '=', queue)
              .as('tick'),
          ])
          .compile(),
      )
      const min = (...values: unknown[]) => {
        const times = values.filter((v) => v !== null && v !== undefined).map(Number)
        return times.length > 0 ? Math.min(...times) : null
      }
      return { run: min(row?.waiting, row?.tick), lease: min(row?.lease) }
    },

    /**
     * Creates or replaces a schedule. `nextAfter` gets the last tick the schedule added (null when none)
     * and answers its next tick, so a replacement never adds a tick twice.
     */
    async upsertSchedule(
      row: Omit<ScheduleRow, 'next_at' | 'last_tick'>,
      nextAfter: (lastTick: number | null) => number | null,
    ): Promise<void> {
      await db.transaction().execute(async (trx) => {
        // Two instances declaring the same schedule at start: one after the other.
        await lockTransaction(trx, kind, `queue-schedule:${row.queue}:${row.id}`)
        const existing = await trx
          .selectFrom('queue_schedules')
          .select('last_tick')
          .where('queue', '=', row.queue)
          .where('id', '=', row.id)
          .executeTakeFirst()
        const lastTick = existing?.last_tick ?? null
        const next = nextAfter(lastTick === null ? null : Number(lastTick))
        if (existing) {
          await trx
            .updateTable('queue_schedules')
            .set({ ...row, next_at: next })
            .where('queue', '=', row.queue)
            .where('id', '=', row.id)
            .execute()
        } else {
          await trx
            .insertInto('queue_schedules')
            .values({ ...row, next_at: next, last_tick: null })
            .execute()
        }
      })
    },

    async removeSchedule(queue: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('queue_schedules')
        .where('queue', '=', queue)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    async schedules(queue: string): Promise<ScheduleRow[]> {
      return db.selectFrom('queue_schedules').selectAll().where('queue', '=', queue).orderBy('id').execute()
    },

    /** The schedules of the queue whose tick has come. */
    async dueSchedules(queue: string, now: number): Promise<ScheduleRow[]> {
      return runCompiled(
        db,
        db.selectFrom('queue_schedules').selectAll().where('queue', '=', queue).where('next_at', '<=', now).compile(),
      )
    },

    /**
     * Fires tick `tick` of a schedule: moves it to `next` and adds `job`, in one transaction, only if the
     * tick is still pending (another instance may have fired it). True when this call fired it.
     */
    async fire(
      queue: string,
      id: string,
      tick: number,
      next: number | null,
      job: NewJob,
      now: number,
    ): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable('queue_schedules')
          .set({ next_at: next, last_tick: tick })
          .where('queue', '=', queue)
          .where('id', '=', id)
          .where('next_at', '=', tick)
          .executeTakeFirst()
        if (Number(moved.numUpdatedRows) === 0) return false
        await trx.insertInto('queue_jobs').values(jobValues(job, now)).execute()
        return true
      })
    },

    /** Unfinished jobs by queue: waiting and due, waiting for a later time (delayed, backoff), active. */
    async depth(now: number): Promise<Map<string, QueueDepth>> {
      const rows = await db
        .selectFrom('queue_jobs')
        .select((eb) => [
          'queue',
          eb.fn.countAll<number | string>().filterWhere('state', '=', 'active').as('active'),
          eb.fn
            .countAll<number | string>()
            .filterWhere('state', '=', 'waiting')
            .filterWhere('run_at', '<=', now)
            .as('due'),
          eb.fn
            .countAll<number | string>()
            .filterWhere('state', '=', 'waiting')
            .filterWhere('run_at', '>', now)
            .as('later'),
        ])
        .where('state', 'in', ['waiting', 'active'])
        .groupBy('queue')
        .execute()
      const counts = rows.map((r) => ({
        queue: r.queue,
        waiting: Number(r.due),
        delayed: Number(r.later),
        active: Number(r.active),
      }))
      return new Map(counts.map((c) => [c.queue, c]))
    },
  }

  async function held(id: string, instance: string, changes: Partial<JobRow>): Promise<boolean> {
    const updated = await runCompiled(
      db,
      db
        .updateTable('queue_jobs')
        .set(changes)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .where('locked_by', '=', instance)
        .returning('id')
        .compile(),
    )
    return updated.length > 0
  }
}

export type QueueStore = ReturnType<typeof createQueueStore>
