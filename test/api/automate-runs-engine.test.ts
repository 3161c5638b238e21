import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { systemClock } from '../../src/lib/clock.js'
import { AppError } from '../../src/lib/errors.js'
import { principals, type Principal } from '../../src/lib/principal.js'
import { createMemoryPubSub, type PubSub } from '../../src/lib/pubsub/index.js'
import { createMemoryQueue, type JobQueue, type NamedQueue, type QueueDefinition } from '../../src/lib/queue/index.js'
import { createMemoryRateLimiter } from '../../src/lib/ratelimit/index.js'
import { createMemorySlots, type Slots } from '../../src/lib/slots/index.js'
import {
  FlowOptionsSchema,
  StepSchema,
  type FlowDefinition,
  type FlowForRun,
  type FlowLookup,
  type FlowOptions,
  type FlowStatus,
} from '../../src/modules/automate/model.js'
import { createRuns, defaultRunLimits, type RunLimits, type Runs } from '../../src/modules/automate/runs/index.js'
import {
  createOperationRegistry,
  operationCatalog,
  type OperationDefinition,
} from '../../src/modules/operations/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner } from '../support/identity.js'
import { testServices } from '../../src/modules/operations/test-context.js'

/**
 * The run engine in process, on the real system database (SQLite, or PostgreSQL with TEST_DATABASE_URL),
 * beside the app's own: a queue of its own and a flow lookup over flows the test defines, so each rule is
 * checked without the flows API (the HTTP scenarios, two instances and the kill test are in automate-runs.test.ts).
 */

interface Engine {
  readonly runs: Runs
  readonly flows: Map<string, FlowForRun>
  /** Every published definition by `${flowId}:${version}`. */
  readonly versions: Map<string, FlowDefinition>
  readonly counted: { flowId: string; failed: boolean }[]
  readonly server: TestServer
  close(): Promise<void>
}

// An http_request that sends nothing, in place of the catalog's: masking names the type, the test needs no network.
const httpRequest: OperationDefinition = {
  type: 'http_request',
  category: 'network',
  label: 'HTTP',
  description: 'test',
  effects: 'none',
  configSchema: z.record(z.string(), z.unknown()),
  run: async () => ({ status: 200 }),
}
const registry = createOperationRegistry([...operationCatalog.filter((o) => o.type !== 'http_request'), httpRequest])

interface EngineOptions {
  readonly limits?: Partial<RunLimits>
  readonly flows?: Map<string, FlowForRun>
  readonly versions?: Map<string, FlowDefinition>
  /** Another instance's view: its places, pub/sub and queue (see `twoInstances`). */
  readonly instance?: { slots: Slots; pubsub: PubSub; queue: JobQueue }
}

async function engineOn(server: TestServer, options: EngineOptions = {}): Promise<Engine> {
  const flows = options.flows ?? new Map<string, FlowForRun>()
  const versions = options.versions ?? new Map<string, FlowDefinition>()
  const counted: Engine['counted'] = []
  const lookup: FlowLookup = {
    byId: async (projectId, id) => (flows.get(id)?.projectId === projectId ? flows.get(id)! : null),
    byWebhookToken: async () => null,
    version: async (projectId, id, version) =>
      flows.get(id)?.projectId === projectId ? (versions.get(`${id}:${version}`) ?? null) : null,
    activeByTrigger: async () => [],
    activeByTriggerAcrossProjects: async () => [],
    countRun: async (_projectId, flowId, outcome) => void counted.push({ flowId, failed: outcome.failed }),
    changes: { add: () => () => {} },
  }
  const { slots, pubsub, queue } = options.instance ?? {
    slots: createMemorySlots(),
    pubsub: createMemoryPubSub(),
    // A queue of its own: the app runs its own engine on app.queue.
    queue: createMemoryQueue({ clock: systemClock }),
  }
  const limiter = createMemoryRateLimiter({ clock: systemClock })
  const { app } = server
  const runs = await createRuns({
    systemDb: app.registry.system.db,
    registry,
    flows: lookup,
    quotas: { limits: async () => ({ ...defaultRunLimits, maxConcurrentRuns: 50, ...options.limits }) },
    access: app.services.access,
    users: app.services.users,
    apiKeys: { findApiKey: app.services.apiKeys.byId },
    limiter,
    queue,
    slots,
    pubsub,
    clock: systemClock,
    log: app.log,
    services: testServices(app.services),
    leaseMs: 2000,
  })
  return {
    runs,
    flows,
    versions,
    counted,
    server,
    async close() {
      await queue.close()
      await runs.close()
      await limiter.close()
      await slots.close()
      await pubsub.close()
    },
  }
}

/** Adds a flow (a row, for the runs' foreign key, and its view in the stand-in lookup). */
/** The person the flows added below are published by (each suite signs up its server's owner). */
let publisher: string | null = null

async function addFlow(
  engine: Engine,
  steps: unknown[],
  options: Partial<FlowOptions> = {},
  status: FlowStatus = 'active',
): Promise<FlowForRun> {
  const id = randomUUID().replaceAll('-', '')
  const projectId = engine.server.app.defaultProject.id
  const now = Math.floor(Date.now() / 1000)
  await engine.server.app.registry.system.db
    .insertInto('flows')
    .values({
      id,
      project_id: projectId,
      slug: id,
      name: 'Test flow',
      description: '',
      icon: 'bolt',
      color: '#6750a4',
      status,
      trigger_type: 'manual',
      trigger_config: '{}',
      operations: '[]',
      options: '{}',
      collections: '["*"]',
      created_by: null,
      run_as: 'triggering_user',
      current_version: 1,
      published_version: 1,
      webhook_token: id,
      run_count: 0,
      error_count: 0,
      created_at: now,
      updated_at: now,
    })
    .execute()
  const definition = {
    name: 'Test flow',
    triggerType: 'manual' as const,
    triggerConfig: {},
    operations: steps.map((s) => StepSchema.parse(s)),
    options: FlowOptionsSchema.parse(options),
    collections: ['*'],
    runAs: 'triggering_user' as const,
  }
  const flow: FlowForRun = {
    id,
    projectId,
    slug: id,
    name: 'Test flow',
    status,
    triggerType: 'manual',
    createdBy: null,
    publishedBy: publisher,
    webhookToken: id,
    publishedVersion: status === 'draft' ? null : 1,
    published: status === 'draft' ? null : definition,
    draft: definition,
  }
  engine.flows.set(id, flow)
  if (status !== 'draft') engine.versions.set(`${id}:1`, definition)
  return flow
}

/**
 * Two instances' views of shared places, pub/sub and queue, where every job one instance adds is taken by
 * the other (what BullMQ may do with any job): a run started here executes there.
 */
function twoInstances(): [NonNullable<EngineOptions['instance']>, NonNullable<EngineOptions['instance']>] {
  const slots: Slots = { ...createMemorySlots(), shared: true }
  const pubsub = createMemoryPubSub()
  const queues = [createMemoryQueue({ clock: systemClock }), createMemoryQueue({ clock: systemClock })]
  const defined: NamedQueue<any>[] = []
  const view = (i: 0 | 1): JobQueue => ({
    shared: true,
    async define<J>(name: string, definition: QueueDefinition<J>): Promise<NamedQueue<J>> {
      const own = await queues[i]!.define(name, definition)
      defined[i] = own
      return {
        ...own,
        name: own.name,
        add: (job, data, addOptions) => defined[1 - i]!.add(job, data, addOptions),
        schedule: own.schedule.bind(own),
        unschedule: own.unschedule.bind(own),
        schedules: own.schedules.bind(own),
      }
    },
    depth: () => queues[i]!.depth(),
    close: () => queues[i]!.close(),
  })
  return [
    { slots, pubsub, queue: view(0) },
    { slots, pubsub, queue: view(1) },
  ]
}

const threeSteps = [
  { key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.n}}' } },
  { key: 'b', type: 'math', config: { operation: 'sum', values: ['{{$steps.a}}', 3] } },
  { key: 'c', type: 'condition', config: { rules: { field: '$steps.b.result', operator: 'gt', value: 4 } } },
]
const delayStep = (ms: number) => ({ key: 'wait', type: 'delay', config: { ms } })

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  try {
    await promise
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, details: err.details }
    throw err
  }
  throw new Error('expected an AppError')
}

describe('run engine (in process)', () => {
  let server: TestServer
  let engine: Engine
  let actor: Principal
  const rowCount = async (table: string) =>
    Number(
      (
        await server.app.registry.system.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const runOf = (runId: string) => engine.runs.service.get(actor, runId)
  const finished = (runId: string) =>
    until(
      () => runOf(runId),
      (r) => !['pending', 'running'].includes(r.status),
      `run ${runId} to finish`,
    )

  beforeAll(async () => {
    server = await startServer()
    engine = await engineOn(server, { limits: { maxRunsPerHour: 10_000 } })
    actor = principals.system(server.app.defaultProject.id, 'test')
    // Runs act within their flow's publisher (decision 045); the system starting them acts as that publisher.
    publisher = (await signUpOwner(server)).id
  })
  afterAll(async () => {
    await engine?.close()
    await server?.stop()
  })

  it('execute runs the published steps and writes the run and every step log in its end state', async () => {
    const flow = await addFlow(engine, threeSteps)
    const started = await engine.runs.service.execute(actor, flow.id, { n: 2 })
    expect(started).toMatchObject({
      flowId: flow.id,
      status: 'running',
      runId: expect.stringMatching(/^[0-9a-f]{32}$/),
    })
    const run = await finished(started.runId)
    expect(run).toMatchObject({
      status: 'completed',
      error: null,
      triggerType: 'manual',
      durationMs: expect.any(Number),
    })
    expect(run.stepLogs.map((s) => [s.key, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ])
    expect(run.stepLogs[1]).toMatchObject({ input: { operation: 'sum', values: [2, 3] }, output: { result: 5 } })
    expect(run.stepLogs[2]!.output).toEqual({ result: true, branch: null, outputs: {} })
    expect(engine.counted).toContainEqual({ flowId: flow.id, failed: false })
  })

  it('a draft or inactive flow is refused with 409 conflict; a missing one is not_found', async () => {
    for (const status of ['draft', 'inactive'] as const) {
      const flow = await addFlow(engine, threeSteps, {}, status)
      expect((await codeOf(engine.runs.service.execute(actor, flow.id, {}))).code).toBe('conflict')
    }
    expect((await codeOf(engine.runs.service.execute(actor, 'nope', {}))).code).toBe('not_found')
  })

  it('log_level errors_only keeps only failed steps; none keeps no step rows but the run row', async () => {
    const failing = [
      ...threeSteps,
      { key: 'boom', type: 'throw_error', config: { message: 'no', statusCode: 422 }, onError: 'continue' },
    ]
    const errorsOnly = await addFlow(engine, failing, { log_level: 'errors_only' })
    const a = await finished((await engine.runs.service.execute(actor, errorsOnly.id, { n: 1 })).runId)
    expect(a.status).toBe('completed')
    expect(a.stepLogs.map((s) => [s.key, s.status])).toEqual([['boom', 'failed']])
    expect(a.stepLogs[0]!.error).toMatchObject({ code: 'flow_error', message: 'no' })
    const none = await addFlow(engine, failing, { log_level: 'none' })
    const b = await finished((await engine.runs.service.execute(actor, none.id, { n: 1 })).runId)
    expect(b.status).toBe('completed')
    expect(b.stepLogs).toEqual([])
  })

  it('throw_error fails the run with its code, message and statusCode', async () => {
    const flow = await addFlow(engine, [
      { key: 't', type: 'throw_error', config: { message: 'Bad input', statusCode: 418 } },
    ])
    const run = await finished((await engine.runs.service.execute(actor, flow.id, {})).runId)
    expect(run).toMatchObject({
      status: 'failed',
      error: { code: 'flow_error', message: 'Bad input', statusCode: 418, step: 't' },
    })
    expect(engine.counted).toContainEqual({ flowId: flow.id, failed: true })
  })

  it('timeout_ms ends a run in a delay as timed_out', async () => {
    const flow = await addFlow(engine, [delayStep(5000)], { timeout_ms: 150 })
    const run = await finished((await engine.runs.service.execute(actor, flow.id, {})).runId)
    expect(run).toMatchObject({ status: 'timed_out', error: { code: 'timed_out', step: 'wait' } })
    expect(run.durationMs).toBeLessThan(2000)
  })

  it('cancel stops a run mid-delay, frees its sequential place at once, and is 404 once terminal or missing', async () => {
    const flow = await addFlow(engine, [delayStep(20_000)])
    const first = await engine.runs.service.execute(actor, flow.id, {})
    const second = await engine.runs.service.execute(actor, flow.id, {})
    expect(first.status).toBe('running')
    expect(second.status).toBe('pending')
    await engine.runs.service.cancel(actor, first.runId)
    expect((await runOf(first.runId)).status).toBe('cancelled')
    await until(
      () => runOf(second.runId),
      (r) => r.status === 'running',
      'the waiting run to take the freed place',
      3000,
    )
    await engine.runs.service.cancel(actor, second.runId)
    expect((await codeOf(engine.runs.service.cancel(actor, first.runId))).code).toBe('not_found')
    expect((await codeOf(engine.runs.service.cancel(actor, 'missing'))).code).toBe('not_found')
    // The cancelled executions never overwrite the cancel.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await runOf(first.runId)).status).toBe('cancelled')
  })

  it('sequential concurrency: never two runs of the flow at once, and all of them complete', async () => {
    const flow = await addFlow(engine, [delayStep(40), ...threeSteps])
    const ids = await Promise.all(
      [1, 2, 3, 4].map(async () => (await engine.runs.service.execute(actor, flow.id, { n: 1 })).runId),
    )
    let maxRunning = 0
    await until(
      async () => {
        const page = await engine.runs.service.listForFlow(actor, flow.id, { page: 1, limit: 25 })
        maxRunning = Math.max(maxRunning, page.data.filter((r) => r.status === 'running').length)
        return page.data
      },
      (rows) => rows.length === 4 && rows.every((r) => r.status === 'completed'),
      'four sequential runs',
    )
    expect(maxRunning).toBe(1)
    const runs = await Promise.all(ids.map(runOf))
    // One after another: each started once the previous one had finished.
    const byStart = runs.sort((x, y) => x.startedAt!.localeCompare(y.startedAt!))
    for (let i = 1; i < byStart.length; i++) expect(byStart[i]!.startedAt! >= byStart[i - 1]!.finishedAt!).toBe(true)
  })

  it('a concurrency of N lets N run at once', async () => {
    const flow = await addFlow(engine, [delayStep(300)], { concurrency: 2 })
    const started = await Promise.all([1, 2, 3].map(() => engine.runs.service.execute(actor, flow.id, {})))
    expect(started.map((s) => s.status).sort()).toEqual(['pending', 'running', 'running'])
    for (const s of started) expect((await finished(s.runId)).status).toBe('completed')
  })

  it('the dry run writes nothing anywhere and returns every step with its output and duration', async () => {
    const flow = await addFlow(
      engine,
      [...threeSteps, { key: 'note', type: 'log', config: { message: 'hi {{$trigger.body.missing}}' } }],
      {},
      'draft',
    )
    const before = [await rowCount('flow_runs'), await rowCount('flow_step_logs'), engine.counted.length]
    // A dry run acts within the person trying it (the system has no rights to lend it: decision 045).
    const projectId = server.app.defaultProject.id
    const superAdmin = (await server.app.services.access.roleByName(projectId, 'super_admin'))!
    const person = principals.capability({
      homeProjectId: projectId,
      userId: publisher!,
      roleId: superAdmin.id,
      roleName: superAdmin.name,
      superAdmin: true,
    })
    const result = await engine.runs.service.test(person, flow.id, { n: 2 })
    expect(result).toMatchObject({ status: 'completed', dryRun: true })
    expect(result.steps.map((s) => [s.key, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
      ['note', 'completed'],
    ])
    expect(result.steps[1]).toMatchObject({ output: { result: 5 }, durationMs: expect.any(Number) })
    expect(result.logs).toEqual([
      expect.objectContaining({ step: 'note', level: 'info', message: 'hi ' }),
      expect.objectContaining({
        step: 'note',
        level: 'warn',
        message: expect.stringContaining('{{$trigger.body.missing}}'),
      }),
    ])
    expect([await rowCount('flow_runs'), await rowCount('flow_step_logs'), engine.counted.length]).toEqual(before)
  })

  it('recorded inputs never hold credentials', async () => {
    const flow = await addFlow(engine, [
      {
        key: 's',
        type: 'http_request',
        config: {
          url: 'https://example.com',
          headers: { Authorization: 'Bearer s3cret', 'X-Trace': 'kept' },
          auth: { type: 'basic', username: 'u', password: 'hunter2' },
        },
      },
    ])
    const run = await finished((await engine.runs.service.execute(actor, flow.id, {})).runId)
    expect(JSON.stringify(run.stepLogs[0]!.input)).not.toMatch(/s3cret|hunter2/)
    expect(run.stepLogs[0]!.input).toMatchObject({
      headers: { Authorization: '••••••••', 'X-Trace': 'kept' },
      auth: { username: 'u', password: '••••••••' },
    })
    const stored = await server.app.registry.system.db
      .selectFrom('flow_step_logs')
      .select('input')
      .where('run_id', '=', run.runId)
      .execute()
    expect(JSON.stringify(stored)).not.toMatch(/s3cret|hunter2/)
  })

  it('lists runs newest first with paging and filters, and deletes a run with its step logs', async () => {
    const flow = await addFlow(engine, threeSteps)
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await engine.runs.service.execute(actor, flow.id, { n: i })).runId)
    for (const id of ids) await finished(id)
    const page = await engine.runs.service.list(actor, { page: 1, limit: 2, flowId: flow.id })
    expect(page).toMatchObject({ total: 3, page: 1, limit: 2, hasMore: true })
    expect(page.data).toHaveLength(2)
    const completed = await engine.runs.service.list(actor, { page: 2, limit: 2, flowId: flow.id, status: 'completed' })
    expect(completed).toMatchObject({ total: 3, hasMore: false })
    expect(completed.data).toHaveLength(1)
    await engine.runs.service.delete(actor, ids[0]!)
    expect((await codeOf(runOf(ids[0]!))).code).toBe('not_found')
    expect((await codeOf(engine.runs.service.delete(actor, ids[0]!))).code).toBe('not_found')
    const logs = await server.app.registry.system.db
      .selectFrom('flow_step_logs')
      .select('run_id')
      .where('run_id', '=', ids[0]!)
      .execute()
    expect(logs).toEqual([])
  })

  it('cleanup-stale takes over runs whose lease lapsed, never a live one by its age; each resumes or ends interrupted', async () => {
    const flow = await addFlow(engine, threeSteps)
    const writer = await addFlow(engine, [
      { key: 'save', type: 'crud_action', config: { action: 'create', collection: 'notes', data: { n: 1 } } },
    ])
    const db = server.app.registry.system.db
    // A real run's identity, so the runs taken over act as someone.
    const { runId } = await engine.runs.service.execute(actor, flow.id, { n: 2 })
    await finished(runId)
    const acting = (await db.selectFrom('flow_runs').select('acting').where('id', '=', runId).executeTakeFirstOrThrow())
      .acting
    const now = Date.now()
    const old = now - 3 * 60_000
    const row = (id: string, flowId: string, status: string, instance: string, leaseUntil: number) => ({
      id,
      project_id: flow.projectId,
      flow_id: flowId,
      version: 1,
      status,
      trigger_type: 'manual',
      trigger: '{"body":{"n":5}}',
      acting,
      error: null,
      depth: 0,
      parent_run_id: null,
      created_at: old,
      started_at: status === 'running' ? old : null,
      finished_at: null,
      duration_ms: null,
      instance_id: instance,
      lease_until: leaseUntil,
      retry_of: null,
    })
    await db
      .insertInto('flow_runs')
      .values([
        row('lapsed-running', flow.id, 'running', 'lost', now - 1000),
        row('lapsed-pending', flow.id, 'pending', 'lost', now - 1000),
        row('lapsed-writing', writer.id, 'running', 'lost', now - 1000),
        // Older than any age cut-off, but their instance (this one) renews them: live, never taken.
        row('old-live', flow.id, 'running', engine.runs.instanceId, now + 60_000),
        row('old-waiting', flow.id, 'pending', engine.runs.instanceId, now + 60_000),
      ])
      .execute()
    await db
      .insertInto('flow_step_logs')
      .values({
        run_id: 'lapsed-writing',
        position: 0,
        project_id: flow.projectId,
        step_key: 'save',
        type: 'crud_action',
        status: 'running',
        input: '{}',
        output: null,
        error: null,
        logs: null,
        attempts: 1,
        started_at: old,
        duration_ms: 0,
      })
      .execute()
    expect(await engine.runs.service.cleanupStale(actor)).toEqual({ reaped: 3 })
    const resumed = await finished('lapsed-running')
    expect(resumed.status).toBe('completed')
    expect(resumed.stepLogs.find((l) => l.key === 'b')).toMatchObject({ output: { result: 8 } })
    expect((await finished('lapsed-pending')).status).toBe('completed')
    const interrupted = await runOf('lapsed-writing')
    expect(interrupted).toMatchObject({ status: 'failed', error: { code: 'interrupted', step: 'save' } })
    expect((interrupted.error as { message: string }).message).toMatch(
      /instance running it \(lost\) was lost \(last heard from at .+\) during step "save"/,
    )
    expect((await runOf('old-live')).status).toBe('running')
    expect((await runOf('old-waiting')).status).toBe('pending')
    expect(await engine.runs.service.cleanupStale(actor)).toEqual({ reaped: 0 })
    await db.deleteFrom('flow_runs').where('id', 'in', ['old-live', 'old-waiting']).execute()
  })

  it('runs per hour: over the quota execute is 403 quota_exceeded naming the quota, its limit and usage', async () => {
    const limited = await engineOn(server, { limits: { maxRunsPerHour: 2 }, flows: engine.flows })
    try {
      const flow = await addFlow(limited, threeSteps)
      await limited.runs.service.execute(actor, flow.id, {})
      await limited.runs.service.execute(actor, flow.id, {})
      const refused = await codeOf(limited.runs.service.execute(actor, flow.id, {}))
      expect(refused).toEqual({ code: 'quota_exceeded', details: { quota: 'maxRunsPerHour', limit: 2, usage: 2 } })
    } finally {
      await limited.close()
    }
  })
})

describe('run engine on two instances (jobs cross)', () => {
  let server: TestServer
  let a: Engine
  let b: Engine
  let actor: Principal

  beforeAll(async () => {
    server = await startServer()
    const [first, second] = twoInstances()
    a = await engineOn(server, { limits: { maxRunsPerHour: 10_000 }, instance: first })
    b = await engineOn(server, {
      limits: { maxRunsPerHour: 10_000 },
      flows: a.flows,
      versions: a.versions,
      instance: second,
    })
    actor = principals.system(server.app.defaultProject.id, 'test')
    publisher = (await signUpOwner(server)).id
  })
  afterAll(async () => {
    // The shared parts close once: b's view shares a's slots and pub/sub.
    await b?.runs.close()
    await a?.close()
    await server?.stop()
  })

  it('a run started as running on one instance and executed on the other gives its place back there', async () => {
    const flow = await addFlow(a, [delayStep(50)])
    const started = await Promise.all([1, 2, 3].map(() => a.runs.service.execute(actor, flow.id, {})))
    expect(started.map((s) => s.status).sort()).toEqual(['pending', 'pending', 'running'])
    for (const s of started) {
      const run = await until(
        () => a.runs.service.get(actor, s.runId),
        (r) => !['pending', 'running'].includes(r.status),
        `run ${s.runId} to finish`,
        5000,
      )
      expect(run.status).toBe('completed')
    }
    // Nothing is held any more, on either instance.
    expect(await a.runs.usage(flow.projectId)).toMatchObject({ concurrentRuns: 0 })
  })
  it('a run executes the version it was started on, even on another instance after a newer publish', async () => {
    const flow = await addFlow(a, [delayStep(100)])
    const first = await a.runs.service.execute(actor, flow.id, {})
    const second = await a.runs.service.execute(actor, flow.id, {})
    expect([first.status, second.status]).toEqual(['running', 'pending'])
    // Version 2 replaces the step while the second run waits for its place.
    const v2 = {
      ...flow.published!,
      operations: [StepSchema.parse({ key: 'other', type: 'set_variable', config: { key: 'x', value: 1 } })],
    }
    a.flows.set(flow.id, { ...flow, publishedVersion: 2, published: v2 })
    a.versions.set(`${flow.id}:2`, v2)
    for (const s of [first, second]) {
      const run = await until(
        () => a.runs.service.get(actor, s.runId),
        (r) => !['pending', 'running'].includes(r.status),
        `run ${s.runId} to finish`,
        5000,
      )
      expect(run).toMatchObject({ status: 'completed', version: 1 })
      expect(run.stepLogs.map((l) => l.key)).toEqual(['wait'])
    }
  })
})
