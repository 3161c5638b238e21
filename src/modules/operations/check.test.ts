import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { createOperationRegistry } from './registry.js'
import { operationCatalog } from './catalog/index.js'
import type { StepNode } from './types.js'

// The real catalog: system_archival (issue 17) is the system operation these rows use.
const registry = createOperationRegistry([...operationCatalog])
const step = (key: string, type: string, config: Record<string, unknown>, extra: Partial<StepNode> = {}): StepNode => ({
  key,
  type,
  config,
  ...extra,
})

function refusal(steps: StepNode[], options?: { system?: boolean }): AppError {
  try {
    registry.checkSteps(steps, options)
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('the steps were accepted')
}

describe('checkSteps: accepted', () => {
  const rows: [string, StepNode[]][] = [
    ['an empty flow', []],
    [
      'every first operation',
      [
        step('v', 'set_variable', { key: 'total', value: { a: [1, '{{$trigger.body.x}}'] } }),
        step('m', 'math', { operation: 'sum', values: [1, '2', '{{$steps.v.a}}'] }),
        step('f', 'math', { operation: 'formula', formula: '{{$steps.m.result}} * 1.2', precision: 2 }),
        step('c', 'condition', {
          rules: { field: '$steps.m.result', operator: 'gt', value: 2 },
          then: [step('l', 'log', { message: 'big {{$steps.m.result}}' })],
          else: [step('s', 'stop', {})],
        }),
        step('d', 'delay', { ms: 10 }),
        step('t', 'throw_error', { message: 'no', statusCode: 409 }),
      ],
    ],
    ['a template where a number goes', [step('d', 'delay', { ms: '{{$trigger.body.wait}}' })]],
    ['a template where a list goes', [step('m', 'math', { operation: 'sum', values: '{{$trigger.body.list}}' })]],
    ['a template where an enum goes', [step('l', 'log', { message: 'x', level: '{{$trigger.body.level}}' })]],
    ['a JSONata expression', [step('l', 'log', { message: '{{= $count($steps) }}' })]],
    [
      'a step condition',
      [step('l', 'log', { message: 'x' }, { condition: { _or: [{ field: '$trigger.body.a', operator: 'is_null' }] } })],
    ],
    ['a null condition', [step('l', 'log', { message: 'x' }, { condition: null })]],
    ['a system operation in a system flow', [step('a', 'system_archival', {})]],
  ]
  it.each(rows)('%s', (_name, steps) => {
    expect(() => registry.checkSteps(steps, { system: _name.includes('system flow') })).not.toThrow()
  })
})

describe('checkSteps: refused with 422 naming the step and the path', () => {
  const rows: [string, StepNode[], { step: string | null; path: string; message: RegExp }][] = [
    [
      'an unknown type',
      [step('a', 'log', { message: 'x' }), step('b', 'send_pigeon', {})],
      {
        step: 'b',
        path: 'operations[1].type',
        message: /^operations\[1\] \(key 'b'\) type: unknown operation type 'send_pigeon'/,
      },
    ],
    [
      'a system operation in a user flow',
      [step('a', 'system_archival', {})],
      { step: 'a', path: 'operations[0].type', message: /runs in system-managed flows only/ },
    ],
    [
      'each system operation in a user flow, nested too',
      [
        step('c', 'condition', {
          rules: { field: '$trigger.x', operator: 'is_null' },
          then: [step('n', 'system_limit_check', {})],
        }),
      ],
      {
        step: 'n',
        path: 'operations[0].config.then[0].type',
        message: /'system_limit_check' runs in system-managed flows only/,
      },
    ],
    [
      'system_monthly_summary in a user flow',
      [step('m', 'system_monthly_summary', {})],
      { step: 'm', path: 'operations[0].type', message: /runs in system-managed flows only/ },
    ],
    [
      'a duplicate key',
      [step('a', 'log', { message: 'x' }), step('a', 'delay', {})],
      { step: 'a', path: 'operations[1].key', message: /already used by operations\[0\]/ },
    ],
    [
      'a duplicate key in a branch',
      [
        step('a', 'condition', {
          rules: { field: '$trigger.x', operator: 'is_null' },
          else: [step('b', 'log', { message: 'x' }), step('a', 'log', { message: 'y' })],
        }),
      ],
      {
        step: 'a',
        path: 'operations[0].config.else[1].key',
        message: /^operations\[0\]\.config\.else\[1\] \(key 'a'\) key: the key is already used by operations\[0\]/,
      },
    ],
    [
      'a bad config value',
      [
        step('x', 'log', { message: 'x' }),
        step('y', 'log', { message: 'x' }),
        step('total', 'math', { operation: 'sum', values: [1, { n: 2 }] }),
      ],
      {
        step: 'total',
        path: 'operations[2].config.values[1]',
        message: /^operations\[2\] \(key 'total'\) config\.values\[1\]: /,
      },
    ],
    [
      'a missing required field',
      [step('t', 'throw_error', {})],
      { step: 't', path: 'operations[0].config.message', message: /config\.message: / },
    ],
    [
      'an out-of-range number',
      [step('d', 'delay', { ms: 25_001 })],
      { step: 'd', path: 'operations[0].config.ms', message: /config\.ms: .*25000/ },
    ],
    [
      'an unknown config key',
      [step('d', 'delay', { ms: 1, mss: 2 })],
      { step: 'd', path: 'operations[0].config', message: /Unrecognized key/ },
    ],
    [
      'a bad enum',
      [step('l', 'log', { message: 'x', level: 'loud' })],
      { step: 'l', path: 'operations[0].config.level', message: /config\.level/ },
    ],
    [
      'a math rule of the operation',
      [step('m', 'math', { operation: 'round', values: [1, 2] })],
      { step: 'm', path: 'operations[0].config.values', message: /round takes exactly one value/ },
    ],
    [
      'a template with an unknown root',
      [step('l', 'log', { message: 'hi {{$secrets.key}}' })],
      { step: 'l', path: 'operations[0].config.message', message: /\$secrets is not available/ },
    ],
    [
      'a template that does not parse',
      [step('l', 'log', { message: 'hi {{$trigger.body' })],
      { step: 'l', path: 'operations[0].config.message', message: /never closed/ },
    ],
    [
      'a bad template in a nested step',
      [
        step('c', 'condition', {
          rules: { field: '$trigger.x', operator: 'is_null' },
          then: [step('n', 'log', { message: '{{ }}' })],
        }),
      ],
      {
        step: 'n',
        path: 'operations[0].config.then[0].config.message',
        message: /^operations\[0\]\.config\.then\[0\] \(key 'n'\) config\.message/,
      },
    ],
    [
      'an unknown type in a nested step',
      [step('c', 'condition', { rules: { field: '$trigger.x', operator: 'is_null' }, then: [step('n', 'nope', {})] })],
      { step: 'n', path: 'operations[0].config.then[0].type', message: /unknown operation type 'nope'/ },
    ],
    [
      'a nested step without a key',
      [
        step('c', 'condition', {
          rules: { field: '$trigger.x', operator: 'is_null' },
          then: [{ type: 'log', config: {} } as never],
        }),
      ],
      { step: 'c', path: 'operations[0].config.then[0].key', message: /config\.then\[0\]\.key/ },
    ],
    [
      'a bad rule in a condition operation',
      [
        step('c', 'condition', {
          rules: {
            _and: [
              { field: '$trigger.x', operator: 'eq', value: 1 },
              { field: '$trigger.y', operator: 'approx', value: 2 },
            ],
          },
        }),
      ],
      {
        step: 'c',
        path: 'operations[0].config.rules._and[1].operator',
        message: /^operations\[0\] \(key 'c'\) config\.rules\._and\[1\]\.operator: must be one of/,
      },
    ],
    [
      'a rule whose bad template stands in a value',
      [step('c', 'condition', { rules: { field: '$trigger.x', operator: 'eq', value: '{{$nope}}' } })],
      { step: 'c', path: 'operations[0].config.rules.value', message: /\$nope is not available/ },
    ],
    [
      'a missing rule tree',
      [step('c', 'condition', {})],
      { step: 'c', path: 'operations[0].config.rules', message: /config\.rules: Required/ },
    ],
    [
      'a bad step condition',
      [
        step(
          'l',
          'log',
          { message: 'x' },
          { condition: { _and: [{ field: '$trigger.a', operator: 'matches', value: '(x)\\1' }] } },
        ),
      ],
      {
        step: 'l',
        path: 'operations[0].condition._and[0].value',
        message: /^operations\[0\] \(key 'l'\) condition\._and\[0\]\.value: .*backreferences/,
      },
    ],
  ]
  it.each(rows)('%s', (_name, steps, want) => {
    const err = refusal(steps)
    expect(err.code).toBe('validation_error')
    expect(err.status).toBe(422)
    expect(err.message).toMatch(want.message)
    expect(err.details).toMatchObject({ step: want.step, path: want.path })
    expect((err.details.issues as unknown[]).length).toBeGreaterThan(0)
  })

  it('refuses steps nested deeper than 8 levels', () => {
    let inner: StepNode = step('leaf', 'log', { message: 'x' })
    for (let i = 0; i < 9; i++)
      inner = step(`c${i}`, 'condition', { rules: { field: '$trigger.x', operator: 'is_null' }, then: [inner] })
    expect(refusal([inner]).message).toMatch(/nest at most 8 levels/)
  })
  it('refuses more than 500 steps', () => {
    const steps = Array.from({ length: 501 }, (_, i) => step(`s${i}`, 'delay', { ms: 0 }))
    expect(refusal(steps).message).toMatch(/at most 500 steps/)
  })
})
