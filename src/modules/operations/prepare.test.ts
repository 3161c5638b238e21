import { describe, expect, it } from 'vitest'
import { createOperationRegistry } from './registry.js'
import { StepError, type StepNode } from './types.js'

const registry = createOperationRegistry()
const data = {
  $trigger: {
    event: null,
    collection: null,
    method: 'POST',
    body: { wait: 250, list: [1, 2, '3'], name: 'Ada', level: 'warn', user: { tags: ['x'] } },
  },
  $steps: { calc: { result: 12.5 } },
  $user: { id: 'u1', email: 'ada@example.com' },
  $flow: { id: 'f1' },
  $run: { id: 'r1' },
  $now: '2026-01-01T00:00:00.000Z',
}
const step = (type: string, config: Record<string, unknown>): StepNode => ({ key: 's', type, config })

describe('prepare', () => {
  it("prepares one node for each run with that run's data (the node's parsed templates are kept, never its values)", async () => {
    const node = step('math', {
      operation: 'sum',
      values: ['{{$trigger.body.wait}}', '{{= $trigger.body.wait * 2 }}', '{{$trigger.body.wait}}', '{{oops'],
    })
    const first = await registry.prepare(node, data)
    const other = { ...data, $trigger: { ...data.$trigger, body: { wait: 7 } } }
    const second = await registry.prepare(node, other)
    expect(first.config).toMatchObject({ values: [250, 500, 250, ''] })
    expect(second.config).toMatchObject({ values: [7, 14, 7, ''] })
    expect(second.unresolved).toEqual([expect.objectContaining({ path: 'values[3]', reason: 'invalid_template' })])
  })
  it('fills in defaults', async () => {
    expect(await registry.prepare(step('delay', {}), data)).toEqual({ config: { ms: 1000 }, unresolved: [] })
    expect((await registry.prepare(step('stop', {}), data)).config).toEqual({
      status: 'success',
      message: 'Flow execution stopped',
    })
  })
  it('resolves whole-value templates with their types', async () => {
    expect((await registry.prepare(step('delay', { ms: '{{$trigger.body.wait}}' }), data)).config).toEqual({ ms: 250 })
    expect(
      (await registry.prepare(step('math', { operation: 'sum', values: '{{$trigger.body.list}}' }), data)).config,
    ).toMatchObject({ values: [1, 2, '3'] })
    expect(
      (await registry.prepare(step('set_variable', { key: 'k', value: '{{$trigger.body.user}}' }), data)).config,
    ).toMatchObject({ value: { tags: ['x'] } })
    expect(
      (await registry.prepare(step('log', { message: 'x', level: '{{$trigger.body.level}}' }), data)).config,
    ).toEqual({ message: 'x', level: 'warn' })
  })
  it('writes in-string templates into the text; a number field takes the numeric text', async () => {
    expect(
      (
        await registry.prepare(
          step('log', { message: 'Hi {{$trigger.body.name}} ({{$user.email}}) at {{$now}}' }),
          data,
        )
      ).config,
    ).toMatchObject({ message: 'Hi Ada (ada@example.com) at 2026-01-01T00:00:00.000Z' })
    expect((await registry.prepare(step('delay', { ms: '{{$trigger.body.wait}}0' }), data)).config).toEqual({
      ms: 2500,
    })
    expect(
      (await registry.prepare(step('math', { operation: 'formula', formula: '{{$steps.calc.result}} * 2' }), data))
        .config,
    ).toMatchObject({ formula: '12.5 * 2' })
  })
  it('evaluates {{= }} through JSONata, whole-value and in-string', async () => {
    expect((await registry.prepare(step('delay', { ms: '{{= $trigger.body.wait * 2 }}' }), data)).config).toEqual({
      ms: 500,
    })
    expect(
      (
        await registry.prepare(
          step('log', { message: 'n={{= $count($trigger.body.list) }}, up={{= $uppercase($trigger.body.name) }}' }),
          data,
        )
      ).config,
    ).toMatchObject({ message: 'n=3, up=ADA' })
    expect(
      (
        await registry.prepare(
          step('set_variable', { key: 'k', value: '{{= $trigger.body.list[$type($) = "number"] }}' }),
          data,
        )
      ).config,
    ).toMatchObject({ value: [1, 2] })
  })
  it('gives the empty value and the reason for what does not resolve', async () => {
    const prepared = await registry.prepare(step('log', { message: 'a{{$trigger.body.none}}b{{= $nope( }}c' }), data)
    expect(prepared.config).toMatchObject({ message: 'abc' })
    expect(prepared.unresolved).toEqual([
      expect.objectContaining({ path: 'message', tag: '{{$trigger.body.none}}', reason: 'missing_key' }),
      expect.objectContaining({ path: 'message', tag: '{{= $nope( }}', reason: 'expression_failed' }),
    ])
  })
  it('bounds an expression in time: it fails with its reason, the step does not hang', async () => {
    const prepared = await registry.prepare(
      step('log', { message: 'x{{= ( $f := function($n) { $f($n + 1) }; $f(0) ) }}' }),
      data,
    )
    expect(prepared.unresolved[0]).toMatchObject({
      reason: 'expression_failed',
      message: expect.stringMatching(/timeout|Stack overflow/),
    })
  })
  it("leaves rawPaths alone: a condition's rules and branch steps are resolved when they run", async () => {
    const config = {
      rules: { field: '$trigger.body.name', operator: 'eq', value: '{{$user.id}}' },
      then: [{ key: 'n', type: 'log', config: { message: '{{$steps.calc.result}}' } }],
    }
    const prepared = await registry.prepare(step('condition', config), data)
    expect(prepared.config).toMatchObject({
      rules: config.rules,
      then: [{ key: 'n', type: 'log', config: { message: '{{$steps.calc.result}}' }, onError: 'stop' }],
    })
  })
  it('throws StepError invalid_config, not retried, when the resolved config fails its schema', async () => {
    const run = registry.prepare(step('delay', { ms: '{{= 99999 }}' }), data)
    await expect(run).rejects.toBeInstanceOf(StepError)
    await expect(run).rejects.toMatchObject({
      code: 'invalid_config',
      retryable: false,
      message: "Step 's' config.ms: Too big: expected number to be <=25000",
      details: { issues: [{ path: 'config.ms' }] },
    })
  })
  it('an unresolved value that a field needs fails the schema, with the reason kept', async () => {
    await expect(registry.prepare(step('delay', { ms: '{{$trigger.body.missing}}' }), data)).rejects.toMatchObject({
      code: 'invalid_config',
      details: { unresolved: [expect.objectContaining({ reason: 'missing_key' })] },
    })
  })
  it('refuses an unknown type', async () => {
    await expect(registry.prepare(step('nope', {}), data)).rejects.toMatchObject({
      code: 'unknown_operation',
      retryable: false,
    })
  })
  it('never lets a template reach the prototype', async () => {
    const prepared = await registry.prepare(
      step('set_variable', {
        key: 'k',
        value: { ['__proto__']: '{{$trigger.body.name}}', a: '{{$trigger.constructor}}' },
      }),
      data,
    )
    expect(({} as Record<string, unknown>).a).toBeUndefined()
    expect(prepared.unresolved).toEqual([expect.objectContaining({ reason: 'invalid_template' })])
  })
  it('refuses a config whose templates name a large value so often that the copies would pass 20,000,000 characters', async () => {
    const large = { ...data, $steps: { read: { content: 'x'.repeat(1_000_000) } } }
    // One copy is fine; 30 copies of the same megabyte would be 30 MB built from a config of a few hundred bytes.
    expect(
      (await registry.prepare(step('set_variable', { key: 'k', value: '{{$steps.read.content}}' }), large)).config,
    ).toMatchObject({ value: large.$steps.read.content })
    const many = step('set_variable', { key: 'k', value: Array.from({ length: 30 }, () => '{{$steps.read.content}}') })
    await expect(registry.prepare(many, large)).rejects.toMatchObject({
      code: 'invalid_config',
      retryable: false,
      message: "Step 's': its templates would give more than 20000000 characters in all",
      details: { limit: 20_000_000 },
    })
  })
})
