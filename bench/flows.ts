import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
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
import { reportLoopInserts } from './flows-loop.js'
import { api, connections, cpuSeconds, durationSeconds, startPlinth, type Child } from './support.js'
import { testServices } from '../src/modules/operations/test-context.js'

/**
 * Issue 15: completed runs per second of a 3-step flow (set_variable, math, condition), log_level full,
 * counting only runs that reached completed with their three step logs written. End to end (POST /execute,
 * and the flow's webhook) beside the engine alone in process (the runs service without HTTP: queue,
 * concurrency places, executor, run and step-log writes). Target: ≥ 1,000 completed runs/s end to end.
 */
const target = 1000
const steps = [
  { key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } },
  { key: 'b', type: 'math', config: { operation: 'sum', values: ['{{$steps.a}}', 3] } },
  { key: 'c', type: 'condition', config: { rules: { field: '$steps.b.result', operator: 'gt', value: 4 } } },
]
const options = { concurrency: 'parallel', log_level: 'full' } as const

/** Completed runs with all three step logs, and the span from the first run's creation to the last one's end. */
function countCompleted(db: Database.Database): { completed: number; seconds: number; started: number } {
  const row = db
    .prepare(
      `select count(*) as n, min(created_at) as first, max(finished_at) as last from flow_runs r
       where status = 'completed' and (select count(*) from flow_step_logs s where s.run_id = r.id) = 3`,
    )
    .get() as { n: number; first: number; last: number }
  const started = (db.prepare('select count(*) as n from flow_runs').get() as { n: number }).n
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

interface Figure {
  readonly rate: number
  readonly completed: number
  readonly started: number
  /** CPU microseconds per completed run (the process doing the work); steadier than rates on a shared machine. */
  readonly cpuMicros: number | null
}

async function engineAlone(): Promise<Figure> {
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

/** One HTTP path (execute or webhook) against a fresh server; null when the route is not there yet. */
async function endToEnd(path: 'execute' | 'webhook'): Promise<Figure | null> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-'))
  const plinth: Child = await startPlinth({ PASSWORD_HASH_ITERATIONS: '1000', DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  try {
    const { token } = await api(plinth.url, '', 'POST', '/api/auth/sign-up/email', {
      email: 'bench@example.com',
      password: 'bench password',
      name: 'B',
    })
    const created = await fetch(`${plinth.url}/api/v1/automate/flows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Bench',
        triggerType: path === 'webhook' ? 'webhook' : 'manual',
        triggerConfig: path === 'webhook' ? { allowed_methods: ['POST'] } : {},
        operations: steps,
        options,
      }),
    })
    if (created.status === 404) return null
    if (!created.ok) throw new Error(`create flow: ${created.status} ${await created.text()}`)
    const flow = ((await created.json()) as { data: { id: string } }).data
    await api(plinth.url, token, 'POST', `/api/v1/automate/flows/${flow.id}/publish`, { changeSummary: 'bench' })
    await api(plinth.url, token, 'PATCH', `/api/v1/automate/flows/${flow.id}/status`, { status: 'active' })
    // The default quota (500 runs per hour) would stop a benchmark after half a second.
    await api(plinth.url, token, 'PATCH', '/api/v1/automate/quotas', {
      maxRunsPerHour: 10_000_000,
      maxConcurrentRuns: Number(process.env.BENCH_CONCURRENT_RUNS ?? 1000),
    })
    const detail = (await api(plinth.url, token, 'GET', `/api/v1/automate/flows/${flow.id}`)).data
    const url =
      path === 'execute'
        ? `${plinth.url}/api/v1/automate/flows/${flow.id}/execute`
        : `${plinth.url}/api/v1/automate/webhook/${detail.webhookEndpoint?.token ?? detail.webhookToken}`
    const headers = {
      'content-type': 'application/json',
      ...(path === 'execute' ? { authorization: `Bearer ${token}` } : {}),
    }
    const probe = await fetch(url, { method: 'POST', headers, body: '{"n":2}' })
    if (probe.status === 404) return null
    if (probe.status !== 202) throw new Error(`${path}: ${probe.status} ${await probe.text()}`)
    const cpuBefore = cpuSeconds(plinth.process.pid)
    const result = await autocannon({
      url,
      method: 'POST',
      headers,
      body: '{"n":2}',
      connections,
      duration: durationSeconds,
    })
    const refused = result.errors + result.timeouts + result.non2xx
    if (refused > 0)
      throw new Error(
        `${path}: ${refused} requests were not accepted (non-2xx ${result.non2xx}, errors ${result.errors})`,
      )
    // Wait until no run is active, then count from the database itself.
    const raw = new Database(join(dataDir, 'system.db'), { readonly: true })
    try {
      const active = raw.prepare("select count(*) as n from flow_runs where status in ('pending', 'running')")
      for (let i = 0; i < 600 && (active.get() as { n: number }).n > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 100))
      const cpuAfter = cpuSeconds(plinth.process.pid)
      const { completed, seconds, started } = countCompleted(raw)
      const cpuMicros = cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 1e6) / completed : null
      return { rate: completed / seconds, completed, started, cpuMicros }
    } finally {
      raw.close()
    }
  } finally {
    await plinth.stop()
  }
}

export async function benchFlows(): Promise<{ ok: boolean }> {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  const alone = await engineAlone()
  const execute = await endToEnd('execute')
  const webhook = execute ? await endToEnd('webhook') : null
  const line = (name: string, r: Figure | null) =>
    r
      ? `${name}: ${fmt(r.rate)} completed runs/s (${fmt(r.completed)} of ${fmt(r.started)} started${r.cpuMicros === null ? '' : `; ${fmt(r.cpuMicros)} µs CPU per run`})`
      : `${name}: not measured (route not available yet)`
  console.log(`flows (3 steps, log_level full, ${connections} in flight, ${durationSeconds} s):`)
  console.log(`  ${line('engine alone, in process', alone)}`)
  console.log(`  ${line('POST /execute', execute)}`)
  console.log(`  ${line('POST /webhook/:token', webhook)}`)
  const endToEndRates = [execute, webhook].filter((r): r is NonNullable<typeof r> => r !== null).map((r) => r.rate)
  const ok = endToEndRates.length > 0 ? endToEndRates.every((rate) => rate >= target) : alone.rate >= target
  console.log(
    `  target ≥ ${fmt(target)} completed runs/s end to end: ${ok ? 'OK' : 'BELOW TARGET'}${endToEndRates.length === 0 ? ' (engine alone only)' : ''}`,
  )
  // Issue 16: a loop of crud_create beside POST /records (flows-loop.ts).
  const loopOk = await reportLoopInserts()
  return { ok: ok && loopOk }
}
