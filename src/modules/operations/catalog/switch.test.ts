import { describe, expect, it } from 'vitest'
import { systemClock } from '../../../lib/clock.js'
import { principals } from '../../../lib/principal.js'
import { createExecutor } from '../../automate/runs/executor.js'
import { createOperationRegistry } from '../registry.js'
import { testContext, testServices } from '../test-context.js'
import type { StepNode } from '../types.js'
import { switchOperation } from './switch.js'

const step = (key: string, type: string, config: Record<string, unknown>): StepNode => ({ key, type, config })
const say = (key: string, message: string) => [step(key, 'set_variable', { key, value: message })]
const parse = (config: Record<string, unknown>) => switchOperation.configSchema.parse(config)
const safe = (config: Record<string, unknown>) => switchOperation.configSchema.safeParse(config)
const cases = [
  { match: 'paid', steps: say('a', 'paid') },
  { match: 42, steps: say('b', 'answer') },
  { match: ['x', 1], steps: say('c', 'list') },
  { match: 'paid', steps: say('d', 'second paid') },
]

describe('switch: config', () => {
  it('needs a value and 1-100 cases of { match, steps }; default is optional', () => {
    expect(safe({ value: 1, cases: [] }).success).toBe(false)
    expect(safe({ value: 1, cases: [{ match: 1, steps: [] }] }).success).toBe(true)
    expect(safe({ value: 1, cases: Array.from({ length: 100 }, (_, i) => ({ match: i, steps: [] })) }).success).toBe(
      true,
    )
    expect(safe({ value: 1, cases: Array.from({ length: 101 }, (_, i) => ({ match: i, steps: [] })) }).success).toBe(
      false,
    )
    expect(safe({ cases: [{ match: 1, steps: [] }] }).success).toBe(false)
    expect(safe({ value: null, cases: [{ match: null, steps: [] }] }).success).toBe(true)
    expect(safe({ value: 1, cases: [{ steps: [] }] }).success).toBe(false)
    expect(safe({ value: 1, cases: [{ match: 1 }] }).success).toBe(false)
    expect(safe({ value: 1, cases: [{ match: 1, steps: [], extra: true }] }).success).toBe(false)
    expect(
      safe({
        value: 1,
        cases: [{ match: 1, steps: Array.from({ length: 101 }, (_, i) => step(`s${i}`, 'log', { message: 'x' })) }],
      }).success,
    ).toBe(false)
  })
  it('declares cases[].steps and default as nested steps, kept raw', () => {
    expect(switchOperation.nestedSteps).toEqual(['cases[].steps', 'default'])
    expect(switchOperation.rawPaths).toEqual(['cases[].steps', 'default'])
  })
  it('is checked on save with case steps as steps of their own', () => {
    const registry = createOperationRegistry()
    expect(() =>
      registry.checkSteps([
        step('sw', 'switch', { value: 1, cases: [{ match: 1, steps: [step('bad', 'delay', { ms: 25_001 })] }] }),
      ]),
    ).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ step: 'bad', path: 'operations[0].config.cases[0].steps[0].config.ms' }),
      }),
    )
    expect(() =>
      registry.checkSteps([
        step('sw', 'switch', { value: 1, cases: [{ match: 1, steps: [] }], default: [step('bad', 'nope', {})] }),
      ]),
    ).toThrow(/unknown operation type 'nope'/)
  })
})

describe('switch: running', () => {
  it.each([
    ['a string', 'paid', 0, { a: 'paid' }],
    ['the first of two equal matches', 'paid', 0, { a: 'paid' }],
    ['a numeric string against a number (as eq)', '42', 1, { b: 'answer' }],
    ['a list, structurally', ['x', 1], 2, { c: 'list' }],
  ] as const)('runs the first matching case: %s', async (_name, value, index, outputs) => {
    const { ctx, nested } = testContext(
      {},
      { runSteps: async (steps) => Object.fromEntries(steps.map((s) => [s.key, s.config.value])) },
    )
    expect(await switchOperation.run(parse({ value, cases, default: say('z', 'default') }), ctx)).toEqual({
      value,
      case: index,
      outputs,
    })
    expect(nested).toEqual([])
  })
  it('runs default when nothing matches, and nothing without a default', async () => {
    const { ctx } = testContext(
      {},
      { runSteps: async (steps) => Object.fromEntries(steps.map((s) => [s.key, s.config.value])) },
    )
    expect(await switchOperation.run(parse({ value: 'refunded', cases, default: say('z', 'default') }), ctx)).toEqual({
      value: 'refunded',
      case: 'default',
      outputs: { z: 'default' },
    })
    expect(await switchOperation.run(parse({ value: 'refunded', cases }), ctx)).toEqual({
      value: 'refunded',
      case: null,
      outputs: {},
    })
    expect(await switchOperation.run(parse({ value: true, cases: [{ match: 'true', steps: [] }] }), ctx)).toEqual({
      value: true,
      case: 0,
      outputs: {},
    })
  })
  it('in a run: templates in value and match resolve, case steps run through the engine as <switch>.<step>', async () => {
    const executor = createExecutor({ registry: createOperationRegistry(), clock: systemClock })
    const result = await executor.execute({
      id: 'r',
      flowId: 'f',
      projectId: 'p1',
      trigger: {
        type: 'manual',
        event: null,
        collection: null,
        method: 'POST',
        body: { status: 'shipped', expect: 'shipped' },
      },
      principal: principals.anonymous('p1'),
      user: null,
      dryRun: false,
      depth: 0,
      services: testServices(),
      options: { timeout_ms: 30_000, max_retries: 0, error_handling: 'stop_on_first' },
      steps: [
        step('sw', 'switch', {
          value: '{{$trigger.body.status}}',
          cases: [
            { match: 'paid', steps: say('p', 'no') },
            {
              match: '{{$trigger.body.expect}}',
              steps: [
                step('s1', 'set_variable', { key: 's1', value: 'yes' }),
                step('s2', 'set_variable', { key: 's2', value: '{{$steps.s1}}!' }),
              ],
            },
          ],
        }),
      ],
    })
    expect(result.status).toBe('completed')
    expect(result.steps.sw).toEqual({ value: 'shipped', case: 1, outputs: { s1: 'yes', s2: 'yes!' } })
    expect(result.records.map((r) => r.key)).toEqual(['sw', 'sw.s1', 'sw.s2'])
  })
})
