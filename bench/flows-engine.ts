import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { systemClock } from '../src/lib/clock.js'
import { openSqlite, runMigrations } from '../src/lib/db/index.js'
import { createLogger } from '../src/lib/log.js'
import { principals } from '../src/lib/principal.js'
import { createMemoryPubSub } from '../src/lib/pubsub/index.js'
import { createMemoryQueue } from '../src/lib/queue/index.js'
import { createMemoryRateLimiter } from '../src/lib/ratelimit/index.js'
import { createMemorySlots } from '../src/lib/slots/index.js'
import { systemMigrations } from '../src/migrations/system/index.js'
import type { Role } from '../src/modules/access/index.js'
import { FlowOptionsSchema, StepSchema, type FlowForRun, type FlowLookup } from '../src/modules/automate/model.js'
import { createRuns, defaultRunLimits } from '../src/modules/automate/runs/index.js'
import { createOperationRegistry } from '../src/modules/operations/index.js'
import { testServices } from '../src/modules/operations/test-context.js'
import { connections, durationSeconds } from './support.js'

/**
 * The baseline of `npm run bench flows`: the runs service alone, in process, without HTTP (queue,
 * concurrency places, executor, run and step-log writes), on the same 3-step flow the HTTP paths run.
 */
export const steps = [
  { key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } },
  { key: 'b', type: 'math', config: { operation: 'sum', values: ['{{$steps.a}}', 3] } },
  { key: 'c', type: 'condition', config: { rules: { field: '$steps.b.result', operator: 'gt', value: 4 } } },
]
export const options = { concurrency: 'parallel', log_level: 'full' } as const

/**
 * Completed runs with all three step logs, and the span from the first run's creation to the last one's end;
 * only runs created at or after `since` (ms; a warm-up's runs come before it).
 */
export function countCompleted(
  db: Database.Database,
  since = 0,
): { completed: number; seconds: number; started: number } {
  const row = db
    .prepare(
      `select count(*) as n, min(created_at) as first, max(finished_at) as last from flow_runs r
       where status = 'completed' and created_at >= ? and (select count(*) from flow_step_logs s where s.run_id = r.id) = 3`,
    )
    .get(since) as { n: number; first: number; last: number }
  const started = (db.prepare('select count(*) as n from flow_runs where created_at >= ?').get(since) as { n: number })
    .n
  return { completed: row.n, seconds: (row.last - row.first) / 1000, started }
}

/**
 * Keeps `connections` calls in flight for `durationSeconds`. With `unfinished`, a caller also waits while
 * that many runs are started but not finished (the in-process engine would otherwise queue runs far faster
 * than any HTTP client can start them).
 */
async function drive(
  start: () => Promise<unknown>,
  backlog?: { unfinished(): number; drained(): Promise<void> },
): Promise<number> {
  const until = Date.now() + durationSeconds * 1000
  let started = 0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        while (backlog && backlog.unfinished() > maxBacklog) await backlog.drained()
        await start()
        started++
      }
    }),
  )
  return started
}
const maxBacklog = 2000

export interface Figure {
  readonly rate: number
  readonly completed: number
  readonly started: number
  /** CPU microseconds per completed run (the process doing the work); steadier than rates on a shared machine. */
  readonly cpuMicros: number | null
}

export async function engineAlone(): Promise<Figure> {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-bench-flows-'))
  const db = openSqlite(join(dir, 'system.db'))
  await runMigrations(db, 'sqlite', systemMigrations)
  const now = Math.floor(Date.now() / 1000)
  await db
    .insertInto('projects')
    .values({ id: 'p1', name: 'Bench', is_default: 1, created_at: now, updated_at: now })
    .execute()
  await db
    .insertInto('flows')
    .values({
      id: 'f1',
      project_id: 'p1',
      slug: 'bench',
      name: 'Bench',
      description: '',
      icon: 'bolt',
      color: '#6750a4',
      status: 'active',
      trigger_type: 'manual',
      trigger_config: '{}',
      operations: JSON.stringify(steps),
      options: JSON.stringify(options),
      collections: '["*"]',
      created_by: null,
      run_as: 'triggering_user',
      current_version: 1,
      published_version: 1,
      webhook_token: 'bench',
      run_count: 0,
      error_count: 0,
      created_at: now,
      updated_at: now,
    })
    .execute()
  const definition = {
    name: 'Bench',
    triggerType: 'manual' as const,
    triggerConfig: {},
    operations: steps.map((s) => StepSchema.parse(s)),
    options: FlowOptionsSchema.parse(options),
    collections: ['*'],
    runAs: 'triggering_user' as const,
  }
  const flow: FlowForRun = {
    id: 'f1',
    projectId: 'p1',
    slug: 'bench',
    name: 'Bench',
    status: 'active',
    triggerType: 'manual',
    createdBy: null,
    publishedBy: 'u1',
    webhookToken: 'bench',
    publishedVersion: 1,
    published: definition,
    draft: definition,
  }
  let finished = 0
  let wake: (() => void) | null = null
  let waiting: Promise<void> | null = null
  const drained = () => (waiting ??= new Promise<void>((resolve) => (wake = resolve)))
  const lookup: FlowLookup = {
    byId: async () => flow,
    byWebhookToken: async () => flow,
    version: async () => definition,
    activeByTrigger: async () => [flow],
    activeByTriggerAcrossProjects: async () => [flow],
    // As the flows service will: one counter update per run.
    countRun: async () => {
      throw new Error('the engine counts runs in batches (countRuns)')
    },
    async countRuns(_p, id, counts) {
      finished += counts.runs
      if (started - finished < maxBacklog / 2) {
        wake?.()
        waiting = null
      }
      await db
        .updateTable('flows')
        .set((eb) => ({
          run_count: eb('run_count', '+', counts.runs),
          error_count: eb('error_count', '+', counts.failures),
          last_run_at: counts.atSeconds,
        }))
        .where('id', '=', id)
        .execute()
    },
    changes: { add: () => () => {} },
  }
  const queue = createMemoryQueue({ clock: systemClock })
  const slots = createMemorySlots()
  const pubsub = createMemoryPubSub()
  const limiter = createMemoryRateLimiter({ clock: systemClock })
  const runs = await createRuns({
    systemDb: db,
    registry: createOperationRegistry(),
    flows: lookup,
    quotas: { limits: async () => ({ ...defaultRunLimits, maxRunsPerHour: 10_000_000, maxConcurrentRuns: 1000 }) },
    // The runs act as the flow's publisher (a system start, decision 045): an administrator here.
    access: {
      authorize: async () => {},
      roleById: async () => ({ id: 'r1', name: 'admin' }) as Role,
      assertMayAssign: async () => {},
      listRoles: async () => [],
      hasAdminAccess: async () => true,
      roleByName: async () => null,
    },
    users: { findRow: async (id: string) => ({ id, project_id: 'p1', role_id: 'r1', email: null, banned: false }) },
    apiKeys: { findApiKey: async () => null },
    limiter,
    queue,
    slots,
    pubsub,
    clock: systemClock,
    log: createLogger('silent'),
    services: testServices(),
  })
  const actor = principals.system('p1', 'bench')
  let started = 0
  try {
    const cpuBefore = process.cpuUsage()
    await drive(
      async () => {
        started++
        await runs.service.execute(actor, 'f1', { n: 2 })
      },
      { unfinished: () => started - finished, drained },
    )
    while (finished < started) await new Promise((resolve) => setTimeout(resolve, 5))
    const cpu = process.cpuUsage(cpuBefore)
    await queue.close()
    await runs.close()
    const raw = new Database(join(dir, 'system.db'), { readonly: true })
    const { completed, seconds } = countCompleted(raw)
    raw.close()
    return { rate: completed / seconds, completed, started, cpuMicros: (cpu.user + cpu.system) / completed }
  } finally {
    await slots.close()
    await pubsub.close()
    await limiter.close()
    await db.destroy()
  }
}
