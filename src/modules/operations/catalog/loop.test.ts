import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createManualClock } from '../../../lib/clock-manual.js'
import { systemClock } from '../../../lib/clock.js'
import { principals } from '../../../lib/principal.js'
import { createExecutor, type RunToExecute } from '../../automate/runs/executor.js'
import { createOperationRegistry } from '../registry.js'
import { testServices } from '../test-context.js'
import { defineOperation, StepError, type StepNode } from '../types.js'
import { operationCatalog } from './index.js'
import { loop, maxLoopItems } from './loop.js'

// Counts passes in flight: each waits one turn of the event loop, so passes started together overlap.
let inFlight = 0
let maxInFlight = 0
let started: number[] = []
const track = defineOperation({
  type: 'track',
  category: 'logic',
  label: 'Track',
  description: 'Counts passes in flight',
  effects: 'none',
  configSchema: z.object({ index: z.number(), fail: z.boolean().default(false) }),
  async run({ index, fail }) {
    started.push(index)
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    await nextTurn()
    inFlight--
    if (fail) throw new StepError('boom', `pass ${index} failed`)
    return index
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
const registry = createOperationRegistry([...operationCatalog, track, writes])
const executor = createExecutor({ registry, clock: systemClock })
const step = (key: string, type: string, config: Record<string, unknown>, extra: Partial<StepNode> = {}): StepNode => ({
  key,
  type,
  config,
  ...extra,
})
const run = (steps: StepNode[], overrides: Partial<RunToExecute> = {}) =>
  executor.execute({
    id: 'run-1',
    flowId: 'flow-1',
    projectId: 'p1',
    steps,
    trigger: { type: 'manual', event: null, collection: null, method: 'POST', body: { list: ['a', 'b', 'c'] } },
    principal: principals.anonymous('p1'),
    user: null,
    dryRun: false,
    depth: 0,
    services: testServices(),
    options: { timeout_ms: 30_000, max_retries: 0, error_handling: 'stop_on_first' },
    ...overrides,
  })
const reset = () => ((inFlight = 0), (maxInFlight = 0), (started = []))
// `fail` is a literal unless a test makes a pass fail: a {{= }} template is evaluated in an evaluator
// process, which spreads the passes' starts over several turns.
const tracked = (count: number, mode: string, extra: Record<string, unknown> = {}, fail: unknown = false) =>
  step('each', 'loop', {
    items: Array.from({ length: count }, (_, i) => i),
    mode,
    ...extra,
    operations: [step('t', 'track', { index: '{{$steps.each.index}}', fail })],
  })

describe('loop: config', () => {
  const parse = (config: Record<string, unknown>) =>
    loop.configSchema.safeParse({ items: [1], operations: [step('a', 'log', { message: 'x' })], ...config })
  it('batchSize is 1-50, default 10; mode serial by default', () => {
    expect(parse({}).data).toMatchObject({ mode: 'serial', batchSize: 10 })
    expect(parse({ batchSize: 0 }).success).toBe(false)
    expect(parse({ batchSize: 1 }).success).toBe(true)
    expect(parse({ batchSize: 50 }).success).toBe(true)
    expect(parse({ batchSize: '50' }).data).toMatchObject({ batchSize: 50 })
    expect(parse({ batchSize: 51 }).success).toBe(false)
    expect(parse({ batchSize: 2.5 }).success).toBe(false)
    expect(parse({ mode: 'random' }).success).toBe(false)
  })
  it(`items: a list of at most ${maxLoopItems}, the JSON text of one, or nothing`, () => {
    expect(parse({ items: new Array(maxLoopItems).fill(0) }).success).toBe(true)
    expect(parse({ items: new Array(maxLoopItems + 1).fill(0) }).success).toBe(false)
    expect(parse({ items: '[1, "two"]' }).data).toMatchObject({ items: [1, 'two'] })
    expect(parse({ items: null }).data).toMatchObject({ items: [] })
    expect(parse({ items: '' }).data).toMatchObject({ items: [] })
    expect(parse({ items: { a: 1 } }).success).toBe(false)
    expect(parse({ items: 'abc' }).success).toBe(false)
    expect(loop.configSchema.safeParse({ operations: [step('a', 'log', { message: 'x' })] }).success).toBe(false)
  })
  it('needs 1-100 steps', () => {
    expect(parse({ operations: [] }).success).toBe(false)
    expect(
      parse({ operations: Array.from({ length: 100 }, (_, i) => step(`s${i}`, 'log', { message: 'x' })) }).success,
    ).toBe(true)
    expect(
      parse({ operations: Array.from({ length: 101 }, (_, i) => step(`s${i}`, 'log', { message: 'x' })) }).success,
    ).toBe(false)
  })
  it('is checked on save with its body as steps of their own', () => {
    expect(() =>
      registry.checkSteps([
        step('each', 'loop', {
          items: '{{$trigger.body.list}}',
          operations: [step('bad', 'math', { operation: 'pow' })],
        }),
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'validation_error',
        details: expect.objectContaining({ step: 'bad', path: 'operations[0].config.operations[0].config.operation' }),
      }),
    )
    expect(() =>
      registry.checkSteps([
        step('each', 'loop', {
          items: '{{$trigger.body.list}}',
          operations: [step('ok', 'log', { message: '{{$steps.each.item}}' })],
        }),
      ]),
    ).not.toThrow()
  })
})

describe('loop: running', () => {
  it('runs its steps per item with $steps.<loop>.item and .index; a step reads the one before it; logs are keyed per pass', async () => {
    const result = await run([
      step('each', 'loop', {
        items: '{{$trigger.body.list}}',
        operations: [
          step('v', 'set_variable', { key: 'v', value: '{{$steps.each.item}}-{{$steps.each.index}}' }),
          step('w', 'set_variable', { key: 'w', value: '{{$steps.v}}!' }),
        ],
      }),
      step('after', 'set_variable', { key: 'n', value: '{{$steps.each.count}}' }),
    ])
    expect(result.status).toBe('completed')
    expect(result.steps.each).toEqual({
      count: 3,
      results: [
        { v: 'a-0', w: 'a-0!' },
        { v: 'b-1', w: 'b-1!' },
        { v: 'c-2', w: 'c-2!' },
      ],
    })
    expect(result.steps.after).toBe(3)
    expect(result.records.map((r) => r.key)).toEqual([
      'each',
      'each[0].v',
      'each[0].w',
      'each[1].v',
      'each[1].w',
      'each[2].v',
      'each[2].w',
      'after',
    ])
    // A pass's outputs do not leak into the flow's $steps.
    expect(result.steps).not.toHaveProperty('v')
  })

  it('takes the JSON text of a list (an in-string template) and runs no pass over nothing', async () => {
    const text = await run(
      [
        step('each', 'loop', {
          items: '[{{$trigger.body.list[0]}}1, 2]',
          operations: [step('v', 'set_variable', { key: 'v', value: '{{$steps.each.item}}' })],
        }),
      ],
      {
        trigger: { type: 'manual', event: null, collection: null, method: 'POST', body: { list: [5] } },
      },
    )
    expect(text.steps.each).toEqual({ count: 2, results: [{ v: 51 }, { v: 2 }] })
    const none = await run([
      step('each', 'loop', { items: '{{$trigger.body.missing}}', operations: [step('v', 'log', { message: 'x' })] }),
    ])
    expect(none.status).toBe('completed')
    expect(none.steps.each).toEqual({ count: 0, results: [] })
    expect(none.records[0]!.unresolved).toHaveLength(1)
  })

  it('fails with invalid_config when items is no list', async () => {
    const result = await run([
      step('each', 'loop', { items: '{{$trigger.body}}', operations: [step('v', 'log', { message: 'x' })] }),
    ])
    expect(result).toMatchObject({ status: 'failed', error: { code: 'invalid_config', step: 'each' } })
  })

  it('serial: one pass at a time, in order', async () => {
    reset()
    const result = await run([tracked(5, 'serial')])
    expect(result.status).toBe('completed')
    expect(maxInFlight).toBe(1)
    expect(started).toEqual([0, 1, 2, 3, 4])
  })

  it('batch: batchSize passes at once, a batch only after the one before', async () => {
    reset()
    const result = await run([tracked(7, 'batch', { batchSize: 3 })])
    expect(result.status).toBe('completed')
    expect(maxInFlight).toBe(3)
    expect((result.steps.each as { results: unknown[] }).results).toEqual([0, 1, 2, 3, 4, 5, 6].map((t) => ({ t })))
    reset()
    await run([tracked(3, 'batch', { batchSize: 1 })])
    expect(maxInFlight).toBe(1)
  })

  it('parallel: up to 50 passes in flight, results in item order', async () => {
    reset()
    const result = await run([tracked(60, 'parallel')])
    expect(result.status).toBe('completed')
    expect(maxInFlight).toBe(50)
    expect((result.steps.each as { results: { t: number }[] }).results.map((r) => r.t)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    )
  })

  it.each([
    ['serial', {}, [0, 1]],
    ['batch', { batchSize: 2 }, [0, 1]],
    ['parallel', {}, null],
  ] as const)(
    '%s: a failing pass fails the loop and the run; no later pass starts',
    async (mode, extra, expectedStarted) => {
      reset()
      const result = await run([
        tracked(mode === 'parallel' ? 120 : 6, mode, extra, '{{= $steps.each.index = 1 }}'),
        step('after', 'log', { message: 'never' }),
      ])
      expect(result).toMatchObject({ status: 'failed', error: { step: 'each' } })
      expect(result.records.find((r) => r.key === 'each[1].t')).toMatchObject({
        status: 'failed',
        error: { code: 'boom' },
      })
      expect(result.records.map((r) => r.key)).not.toContain('after')
      // Which passes started, not in which order: a batch's passes start together, and each waits on an
      // out-of-process evaluator for its template, so they may reach the step in either order.
      if (expectedStarted) expect([...started].sort((a, b) => a - b)).toEqual(expectedStarted)
      else expect(started.length).toBeLessThan(120)
    },
  )

  it('onError continue inside the body tolerates a failing pass', async () => {
    reset()
    const result = await run([
      step('each', 'loop', {
        items: [0, 1],
        operations: [step('t', 'track', { index: '{{$steps.each.index}}', fail: true }, { onError: 'continue' })],
      }),
    ])
    expect(result.status).toBe('completed')
    expect(result.steps.each).toEqual({
      count: 2,
      results: [
        { t: { error: { code: 'boom', message: 'pass 0 failed' } } },
        { t: { error: { code: 'boom', message: 'pass 1 failed' } } },
      ],
    })
  })

  it('stop inside a pass ends the run there', async () => {
    const result = await run([
      step('each', 'loop', {
        items: [1, 2, 3],
        operations: [
          step(
            's',
            'stop',
            { status: 'success' },
            { condition: { field: '$steps.each.index', operator: 'eq', value: 1 } },
          ),
        ],
      }),
      step('after', 'log', { message: 'no' }),
    ])
    expect(result.status).toBe('completed')
    expect(result.records.map((r) => [r.key, r.status])).toEqual([
      ['each', 'completed'],
      ['each[0].s', 'skipped'],
      ['each[1].s', 'completed'],
    ])
  })

  it('the run timeout stops a parallel loop: passes in flight end, no new one starts', async () => {
    const clock = createManualClock(0)
    const timed = createExecutor({ registry, clock }).execute({
      id: 'run-t',
      flowId: 'flow-1',
      projectId: 'p1',
      trigger: { type: 'manual', event: null, collection: null, method: 'POST', body: {} },
      principal: principals.anonymous('p1'),
      user: null,
      dryRun: false,
      depth: 0,
      services: testServices(),
      options: { timeout_ms: 1000, max_retries: 0, error_handling: 'stop_on_first' },
      steps: [
        step('each', 'loop', {
          items: Array.from({ length: 200 }, (_, i) => i),
          mode: 'parallel',
          operations: [step('wait', 'delay', { ms: 5000 })],
        }),
      ],
    })
    await nextTurn()
    await clock.advance(1000)
    const result = await timed
    expect(result).toMatchObject({ status: 'timed_out', error: { code: 'timed_out' } })
    const passes = result.records.filter((r) => r.key.endsWith('.wait'))
    expect(passes).toHaveLength(50)
    expect(passes.every((r) => r.status === 'failed' && r.error?.code === 'timed_out')).toBe(true)
  })

  it('nests: an inner loop sees the outer item', async () => {
    const result = await run([
      step('outer', 'loop', {
        items: [[1, 2], [3]],
        operations: [
          step('inner', 'loop', {
            items: '{{$steps.outer.item}}',
            operations: [
              step('p', 'set_variable', { key: 'p', value: '{{$steps.outer.index}}:{{$steps.inner.item}}' }),
            ],
          }),
        ],
      }),
    ])
    expect(result.steps.outer).toEqual({
      count: 2,
      results: [
        { inner: { count: 2, results: [{ p: '0:1' }, { p: '0:2' }] } },
        { inner: { count: 1, results: [{ p: '1:3' }] } },
      ],
    })
    expect(result.records.map((r) => r.key)).toContain('outer[1].inner[0].p')
  })

  it('in a dry run, the body runs but steps that write are skipped', async () => {
    const result = await run(
      [
        step('each', 'loop', {
          items: [1],
          operations: [step('w', 'write_something', {}), step('v', 'set_variable', { key: 'v', value: 1 })],
        }),
      ],
      { dryRun: true },
    )
    expect(result.status).toBe('completed')
    expect(result.records.map((r) => [r.key, r.status])).toEqual([
      ['each', 'completed'],
      ['each[0].w', 'skipped'],
      ['each[0].v', 'completed'],
    ])
  })
})
