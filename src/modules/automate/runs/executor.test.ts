import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createManualClock } from '../../../lib/clock-manual.js'
import { systemClock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import { principals } from '../../../lib/principal.js'
import {
  createOperationRegistry,
  defineOperation,
  operationCatalog,
  StepError,
  type OperationDefinition,
  type StepNode,
} from '../../operations/index.js'
import { testServices } from '../../operations/test-context.js'
import { createExecutor, RunAborted, type RunToExecute } from './executor.js'

// Fails the first `failures` attempts of each run (counted per step key), then answers { ok: true }.
let calls = new Map<string, number>()
const flaky = defineOperation({
  type: 'flaky',
  category: 'logic',
  label: 'Flaky',
  description: 'Fails a number of times',
  effects: 'none',
  configSchema: z.object({ failures: z.number().int(), id: z.string() }),
  async run({ failures, id }) {
    const n = (calls.get(id) ?? 0) + 1
    calls.set(id, n)
    if (n <= failures) throw new StepError('flaky', `failure ${n}`)
    return { ok: true, attempts: n }
  },
})
// What an operation calling a service sees when the service refuses (a row the principal may not touch).
const refused = defineOperation({
  type: 'refused',
  category: 'data',
  label: 'Refused',
  description: 'A service says no',
  effects: 'reads',
  configSchema: z.object({ code: z.enum(['forbidden', 'rate_limited']) }),
  async run({ code }) {
    throw new AppError(code, code === 'forbidden' ? 'You may not read this record' : 'Slow down', {
      collection: 'notes',
    })
  },
})
const writes = defineOperation({
  type: 'write_something',
  category: 'data',
  label: 'Writes',
  description: 'Has effects',
  effects: 'writes',
  configSchema: z.object({}),
  async run() {
    throw new Error('a dry run must never run me')
  },
})
const withCatalog = (...extra: OperationDefinition[]) => createOperationRegistry([...operationCatalog, ...extra])
const registry = withCatalog(flaky, writes, refused)

function runOf(
  steps: StepNode[],
  overrides: Partial<RunToExecute> = {},
  options: Partial<RunToExecute['options']> = {},
): RunToExecute {
  return {
    id: 'run-1',
    flowId: 'flow-1',
    projectId: 'p1',
    steps,
    trigger: { type: 'webhook', event: null, collection: null, method: 'POST', body: { n: 2, name: 'Ada' } },
    principal: principals.anonymous('p1'),
    user: { id: 'u1', email: 'ada@example.com' },
    dryRun: false,
    depth: 0,
    services: testServices(),
    options: { timeout_ms: 30_000, max_retries: 0, error_handling: 'stop_on_first', ...options },
    ...overrides,
  }
}
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 5))
const step = (key: string, type: string, config: Record<string, unknown>, extra: Partial<StepNode> = {}): StepNode => ({
  key,
  type,
  config,
  ...extra,
})

describe('executor', () => {
  const executor = createExecutor({ registry, clock: systemClock })

  it('runs steps in order with every template variable, skips a false condition and records each step', async () => {
    const result = await executor.execute(
      runOf([
        step('a', 'set_variable', { key: 'x', value: '{{$trigger.body.n}}' }),
        step('b', 'math', { operation: 'sum', values: ['{{$steps.a}}', 3] }),
        step('c', 'log', { message: '{{$user.email}} {{$flow.id}} {{$run.id}} {{$trigger.method}} {{$now}}' }),
        step('d', 'log', { message: 'never' }, { condition: { field: '$steps.b.result', operator: 'gt', value: 100 } }),
        step('e', 'log', { message: 'missing: {{$trigger.body.nope}}' }),
      ]),
    )
    expect(result.status).toBe('completed')
    expect(result.steps.b).toEqual({ result: 5 })
    expect(result.records.map((r) => [r.key, r.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
      ['d', 'skipped'],
      ['e', 'completed'],
    ])
    expect(String((result.records[2]!.output as { message: string }).message)).toMatch(
      /^ada@example\.com flow-1 run-1 POST \d{4}-\d\d-\d\dT/,
    )
    expect(result.records[4]!.unresolved).toEqual([
      expect.objectContaining({
        tag: '{{$trigger.body.nope}}',
        reason: expect.any(String),
        message: expect.any(String),
      }),
    ])
    expect(result.records[2]!.logs).toEqual([expect.objectContaining({ level: 'info' })])
  })

  const failing = [
    {
      name: 'stop fails the run at the step',
      onError: 'stop',
      errorHandling: 'stop_on_first',
      status: 'failed',
      ran: ['bad'],
      badStatus: 'failed',
    },
    {
      name: 'continue_all runs on but ends failed',
      onError: 'stop',
      errorHandling: 'continue_all',
      status: 'failed',
      ran: ['bad', 'after'],
      badStatus: 'failed',
    },
    {
      name: 'continue tolerates the failure',
      onError: 'continue',
      errorHandling: 'stop_on_first',
      status: 'completed',
      ran: ['bad', 'after'],
      badStatus: 'failed',
    },
    {
      name: 'fallback completes the step with the fallback value',
      onError: 'fallback',
      errorHandling: 'stop_on_first',
      status: 'completed',
      ran: ['bad', 'after'],
      badStatus: 'completed',
    },
  ] as const
  for (const row of failing) {
    it(`onError: ${row.name}`, async () => {
      calls = new Map()
      const result = await executor.execute(
        runOf(
          [
            step(
              'bad',
              'flaky',
              { failures: 99, id: row.name },
              { onError: row.onError, fallbackValue: { fallback: true } },
            ),
            step('after', 'set_variable', { key: 'seen', value: '{{$steps.bad}}' }),
          ],
          {},
          { error_handling: row.errorHandling },
        ),
      )
      expect(result.status).toBe(row.status)
      expect(result.records.map((r) => r.key)).toEqual(row.ran)
      expect(result.records[0]!.status).toBe(row.badStatus)
      expect(result.records[0]!.error).toMatchObject({ code: 'flaky' })
      if (row.status === 'failed') expect(result.error).toMatchObject({ code: 'flaky', step: 'bad' })
      if (row.onError === 'fallback') expect(result.steps.after).toEqual({ fallback: true })
      if (row.onError === 'continue')
        expect(result.steps.after).toEqual({ error: { code: 'flaky', message: 'failure 1' } })
    })
  }

  it('retries a step with exponential backoff on the clock, then succeeds', async () => {
    calls = new Map()
    const clock = createManualClock(0)
    const run = createExecutor({ registry, clock }).execute(
      runOf([
        step(
          'r',
          'flaky',
          { failures: 2, id: 'retry' },
          { onError: 'retry', retryConfig: { maxAttempts: 3, delayMs: 100, backoff: 'exponential' } },
        ),
      ]),
    )
    await settle()
    await clock.advance(99)
    expect(calls.get('retry')).toBe(1)
    await clock.advance(1) // first retry after 100 ms
    await settle()
    expect(calls.get('retry')).toBe(2)
    await settle()
    await clock.advance(199)
    expect(calls.get('retry')).toBe(2)
    await settle()
    await clock.advance(1) // second retry 200 ms later
    const result = await run
    expect(result.status).toBe('completed')
    expect(result.records[0]).toMatchObject({ status: 'completed', attempts: 3, output: { ok: true, attempts: 3 } })
  })

  it('fails the run once retries are exhausted', async () => {
    calls = new Map()
    const result = await executor.execute(
      runOf([
        step(
          'r',
          'flaky',
          { failures: 5, id: 'exhausted' },
          { onError: 'retry', retryConfig: { maxAttempts: 2, delayMs: 0, backoff: 'fixed' } },
        ),
      ]),
    )
    expect(result.status).toBe('failed')
    expect(result.records[0]).toMatchObject({ status: 'failed', attempts: 2 })
  })

  it('stop ends the run: success completes it, error fails it; later steps never run', async () => {
    const ok = await executor.execute(
      runOf([step('s', 'stop', { status: 'success', message: 'done' }), step('x', 'log', { message: 'no' })]),
    )
    expect(ok.status).toBe('completed')
    expect(ok.records.map((r) => r.key)).toEqual(['s'])
    const bad = await executor.execute(
      runOf([step('s', 'stop', { status: 'error', message: 'nope' }), step('x', 'log', { message: 'no' })]),
    )
    expect(bad).toMatchObject({ status: 'failed', error: { code: 'stopped', message: 'nope', step: 's' } })
  })

  it('throw_error fails the run with its message and statusCode, and is not retried', async () => {
    const result = await executor.execute(
      runOf([
        step(
          't',
          'throw_error',
          { message: 'Bad {{$trigger.body.name}}', statusCode: 418 },
          { onError: 'retry', retryConfig: { maxAttempts: 3, delayMs: 0, backoff: 'fixed' } },
        ),
      ]),
    )
    expect(result).toMatchObject({
      status: 'failed',
      error: { code: 'flow_error', message: 'Bad Ada', statusCode: 418, step: 't' },
    })
    expect(result.records[0]!.attempts).toBe(1)
  })

  it('times out the whole run, delays included', async () => {
    const clock = createManualClock(0)
    const run = createExecutor({ registry, clock }).execute(
      runOf([step('w', 'delay', { ms: 5000 }), step('x', 'log', { message: 'no' })], {}, { timeout_ms: 1000 }),
    )
    await settle()
    await clock.advance(1000)
    const result = await run
    expect(result).toMatchObject({ status: 'timed_out', error: { code: 'timed_out', step: 'w' } })
    expect(result.records.map((r) => [r.key, r.status])).toEqual([['w', 'failed']])
    expect(result.durationMs).toBe(1000)
  })

  it('a cancel mid-delay ends the run as cancelled', async () => {
    const clock = createManualClock(0)
    const cancel = new AbortController()
    const run = createExecutor({ registry, clock }).execute(
      runOf([step('w', 'delay', { ms: 5000 })], { signal: cancel.signal }),
    )
    await settle()
    await clock.advance(10)
    cancel.abort(new RunAborted('cancelled', 'Cancelled by a user'))
    const result = await run
    expect(result).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', message: 'Cancelled by a user' } })
  })

  it('max_retries goes on from the step that failed, with the outputs before it; never past a step that wrote', async () => {
    calls = new Map()
    const result = await executor.execute(
      runOf(
        [
          step('a', 'flaky', { failures: 0, id: 'first' }),
          step('b', 'flaky', { failures: 2, id: 'whole' }),
          step('c', 'set_variable', { key: 'x', value: '{{$steps.a.attempts}}' }),
        ],
        {},
        { max_retries: 2 },
      ),
    )
    expect(result.status).toBe('completed')
    // a ran once (its output kept for c), b three times; every attempt's log is kept, in order.
    expect(result.records.map((r) => `${r.key}:${r.status}`)).toEqual([
      'a:completed',
      'b:failed',
      'b:failed',
      'b:completed',
      'c:completed',
    ])
    expect(result.records.map((r) => r.position)).toEqual([0, 1, 2, 3, 4])
    expect(calls.get('first')).toBe(1)
    expect(result.steps).toMatchObject({ a: { attempts: 1 }, c: 1 })
    calls = new Map()
    const failed = await executor.execute(
      runOf([step('b', 'flaky', { failures: 5, id: 'whole' })], {}, { max_retries: 1 }),
    )
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'flaky', attempts: 2 } })
    // A deliberate failure (throw_error) is not run again.
    const thrown = await executor.execute(runOf([step('t', 'throw_error', { message: 'no' })], {}, { max_retries: 3 }))
    expect(thrown.status).toBe('failed')
    expect(thrown.error).not.toHaveProperty('attempts')
    // A step that writes and failed may have written: the run is not retried over it.
    const wrote = await executor.execute(runOf([step('w', 'write_something', {})], {}, { max_retries: 3 }))
    expect(wrote.status).toBe('failed')
    expect(wrote.records).toHaveLength(1)
  })

  it('tells its progress: each step as it ends, and a step that writes before it runs', async () => {
    const told: string[] = []
    const progress = {
      began: async (r: { key: string }) => void told.push(`began ${r.key}`),
      ended: (r: { key: string; status: string }) => void told.push(`ended ${r.key} ${r.status}`),
    }
    await executor.execute(
      runOf([step('a', 'log', { message: 'x' }), step('w', 'write_something', {})], { progress: progress as never }),
    )
    expect(told).toEqual(['ended a completed', 'began w', 'ended w failed'])
  })

  it('resumes after the steps a lost instance completed, their outputs as $steps, logging on from the next position', async () => {
    calls = new Map()
    const result = await executor.execute(
      runOf(
        [
          step('a', 'flaky', { failures: 0, id: 'never' }),
          step('b', 'set_variable', { key: 'x', value: '{{$steps.a.got}}' }),
        ],
        { resume: { from: 1, outputs: { a: { got: 'kept' } }, nextPosition: 4 } },
      ),
    )
    expect(result.status).toBe('completed')
    expect(calls.get('never')).toBeUndefined()
    expect(result.records.map((r) => [r.key, r.position])).toEqual([['b', 4]])
    expect(result.steps).toMatchObject({ a: { got: 'kept' }, b: 'kept' })
  })

  it('a dry run skips operations that write and says so', async () => {
    const result = await executor.execute(
      runOf([step('w', 'write_something', {}), step('a', 'set_variable', { key: 'x', value: 1 })], { dryRun: true }),
    )
    expect(result.status).toBe('completed')
    expect(result.records[0]).toMatchObject({
      status: 'skipped',
      logs: [{ level: 'info', message: expect.stringMatching(/dry run/) }],
    })
  })

  it('nested steps run with the same rules under <parent>.<child> keys', async () => {
    const loop = defineOperation({
      type: 'twice',
      category: 'logic',
      label: 'Twice',
      description: 'Runs its steps twice',
      effects: 'none',
      nestedSteps: ['steps'],
      configSchema: z.object({}).passthrough(),
      async run(_config, ctx) {
        const out = []
        for (const index of [0, 1])
          out.push(
            await ctx.runSteps([step('inner', 'set_variable', { key: 'i', value: '{{$steps.loop.index}}' })], {
              loop: { index },
            }),
          )
        return out
      },
    })
    const nested = createExecutor({ registry: withCatalog(loop), clock: systemClock })
    const result = await nested.execute(runOf([step('loop', 'twice', {})]))
    expect(result.status).toBe('completed')
    expect(result.steps.loop).toEqual([{ inner: 0 }, { inner: 1 }])
    expect(result.records.map((r) => r.key)).toEqual(['loop', 'loop.inner', 'loop.inner'])
    expect(result.records.map((r) => r.position)).toEqual([0, 1, 2])
  })

  it('an invalid config after templates fails the step with invalid_config', async () => {
    const result = await executor.execute(runOf([step('m', 'math', { operation: 'pow', values: [] })]))
    expect(result).toMatchObject({ status: 'failed', error: { code: 'invalid_config', step: 'm' } })
  })

  it("a service's refusal is a typed step error with its code, details and status; only a retryable one is retried", async () => {
    const retry = { onError: 'retry' as const, retryConfig: { maxAttempts: 3, delayMs: 0, backoff: 'fixed' as const } }
    const forbidden = await executor.execute(runOf([step('read', 'refused', { code: 'forbidden' }, retry)]))
    expect(forbidden).toMatchObject({
      status: 'failed',
      error: { code: 'forbidden', message: 'You may not read this record', step: 'read', statusCode: 403 },
    })
    expect(forbidden.records[0]).toMatchObject({
      attempts: 1,
      error: { code: 'forbidden', details: { collection: 'notes' } },
    })
    const limited = await executor.execute(runOf([step('read', 'refused', { code: 'rate_limited' }, retry)]))
    expect(limited).toMatchObject({ status: 'failed', error: { code: 'rate_limited', statusCode: 429 } })
    expect(limited.records[0]!.attempts).toBe(3)
  })
})

describe('the run data budget', () => {
  // Gives out a list of `n` small objects: what a large response or a wide read gives a step.
  const wide = defineOperation({
    type: 'wide',
    category: 'data',
    label: 'Wide',
    description: 'A big output',
    effects: 'none',
    configSchema: z.object({ n: z.number().int() }),
    async run({ n }) {
      return { items: Array.from({ length: n }, (_, i) => ({ i, name: `item ${i}` })) }
    },
  })
  const executor = createExecutor({ registry: withCatalog(wide), clock: systemClock, maxRunDataBytes: 1_000_000 })

  it('a step whose output would pass it fails run_data_limit, and the step before it keeps its output', async () => {
    const result = await executor.execute(
      runOf([step('small', 'wide', { n: 100 }), step('huge', 'wide', { n: 100_000 })]),
    )
    expect(result.status).toBe('failed')
    expect(result.error).toMatchObject({ code: 'run_data_limit', step: 'huge' })
    expect(result.records.map((r) => [r.key, r.status])).toEqual([
      ['small', 'completed'],
      ['huge', 'failed'],
    ])
    expect(result.records[1]!.output).toBeNull()
    expect((result.steps.small as { items: unknown[] }).items).toHaveLength(100)
  })

  it('outputs add up across a loop: the pass that passes the budget stops it', async () => {
    const result = await executor.execute(
      runOf([
        step('each', 'loop', {
          items: Array.from({ length: 200 }, (_, i) => i),
          operations: [step('read', 'wide', { n: 100 })],
        }),
      ]),
    )
    expect(result.status).toBe('failed')
    expect(result.records.find((r) => r.status === 'failed' && r.key.startsWith('each['))?.error?.code).toBe(
      'run_data_limit',
    )
    const passes = result.records.filter((r) => r.key.startsWith('each[') && r.status === 'completed').length
    expect(passes).toBeGreaterThan(10)
    expect(passes).toBeLessThan(200)
  })
})
