import { describe, expect, it } from 'vitest'
import { createOperationRegistry } from '../registry.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { maxTransformItems, transform } from './transform.js'

const orders = [
  { id: 1, status: 'paid', total: 30, customer: { name: 'Ada', city: 'Paris' }, tags: ['a', 'b'] },
  { id: 2, status: 'open', total: 5, customer: { name: 'Bob', city: 'Rome' }, tags: ['b'] },
  { id: 3, status: 'paid', total: 12, customer: { name: 'Cy', city: 'Paris' }, tags: [] },
  { id: 4, status: 'paid', total: null, customer: { name: 'Di', city: null }, tags: ['c'] },
]
const run = async (input: unknown, operations: unknown[], data: Record<string, unknown> = {}) =>
  (
    (await transform.run(transform.configSchema.parse({ input, operations }), testContext(data).ctx)) as {
      result: unknown
    }
  ).result
const safe = (operations: unknown[]) => transform.configSchema.safeParse({ input: [], operations })

describe('transform: operations', () => {
  it.each([
    ['map a field', orders, [{ type: 'map', field: 'customer.name' }], ['Ada', 'Bob', 'Cy', 'Di']],
    [
      'map fields into objects (missing → null)',
      orders.slice(0, 2),
      [{ type: 'map', fields: { who: 'customer.name', first: 'tags[0]', none: 'nope.x' } }],
      [
        { who: 'Ada', first: 'a', none: null },
        { who: 'Bob', first: 'b', none: null },
      ],
    ],
    [
      'filter by a rule tree over $item',
      orders,
      [
        {
          type: 'filter',
          rules: {
            _and: [
              { field: '$item.status', operator: 'eq', value: 'paid' },
              { field: '$item.total', operator: 'gte', value: 12 },
            ],
          },
        },
        { type: 'map', field: 'id' },
      ],
      [1, 3],
    ],
    [
      'filter by $index',
      [10, 20, 30],
      [{ type: 'filter', rules: { field: '$index', operator: 'gt', value: 0 } }],
      [20, 30],
    ],
    [
      'filter comparing with the run data',
      orders,
      [
        { type: 'filter', rules: { field: '$item.customer.city', operator: 'eq', value: '{{$trigger.body.city}}' } },
        { type: 'map', field: 'id' },
      ],
      [2],
    ],
    [
      'pick keys of each object',
      orders.slice(0, 1),
      [{ type: 'pick', fields: ['id', 'status', 'absent'] }],
      [{ id: 1, status: 'paid' }],
    ],
    ['pick keys of one object', { a: 1, b: 2 }, [{ type: 'pick', fields: ['b'] }], { b: 2 }],
    ['omit keys', { a: 1, b: 2, c: 3 }, [{ type: 'omit', fields: ['a', 'c'] }], { b: 2 }],
    [
      'merge a list of objects (later wins)',
      [{ a: 1, b: 1 }, { b: 2 }, { c: 3 }],
      [{ type: 'merge' }],
      { a: 1, b: 2, c: 3 },
    ],
    ['merge an object with another', { a: 1, b: 1 }, [{ type: 'merge', with: { b: 2, c: 3 } }], { a: 1, b: 2, c: 3 }],
    ['flatten one level by default', [[1, [2]], 3, [4]], [{ type: 'flatten' }], [1, [2], 3, 4]],
    ['flatten deeper', [[1, [2, [3]]]], [{ type: 'flatten', depth: 2 }], [1, 2, [3]]],
    [
      'unique values, structurally',
      [1, '1', 1, { a: 1 }, { a: 1 }, null, null],
      [{ type: 'unique' }],
      [1, '1', { a: 1 }, null],
    ],
    [
      'unique by a field (first kept)',
      orders,
      [
        { type: 'unique', field: 'customer.city' },
        { type: 'map', field: 'id' },
      ],
      [1, 2, 4],
    ],
    [
      'sort by a number field, nulls last',
      orders,
      [
        { type: 'sort', field: 'total' },
        { type: 'map', field: 'id' },
      ],
      [2, 3, 1, 4],
    ],
    [
      'sort descending, nulls still last',
      orders,
      [
        { type: 'sort', field: 'total', order: 'desc' },
        { type: 'map', field: 'id' },
      ],
      [1, 3, 2, 4],
    ],
    [
      'sort text by code unit (ISO dates order)',
      ['2026-02-01', '2025-12-31', '2026-01-15'],
      [{ type: 'sort' }],
      ['2025-12-31', '2026-01-15', '2026-02-01'],
    ],
    [
      'sort is stable',
      orders,
      [
        { type: 'sort', field: 'status' },
        { type: 'map', field: 'id' },
      ],
      [2, 1, 3, 4],
    ],
    ['reverse', [1, 2, 3], [{ type: 'reverse' }], [3, 2, 1]],
    ['slice', [1, 2, 3, 4, 5], [{ type: 'slice', start: 1, end: 3 }], [2, 3]],
    ['slice from the end', [1, 2, 3, 4, 5], [{ type: 'slice', start: -2 }], [4, 5]],
    [
      'groupBy a field (missing → "null")',
      orders,
      [{ type: 'groupBy', field: 'customer.city' }],
      { Paris: [orders[0], orders[2]], Rome: [orders[1]], null: [orders[3]] },
    ],
    [
      'chains operations in order',
      orders,
      [
        { type: 'filter', rules: { field: '$item.status', operator: 'eq', value: 'paid' } },
        { type: 'sort', field: 'customer.name', order: 'desc' },
        { type: 'slice', end: 2 },
        { type: 'map', field: 'customer.name' },
      ],
      ['Di', 'Cy'],
    ],
  ])('%s', async (_name, input, operations, expected) => {
    expect(await run(input, operations, { $trigger: { body: { city: 'Rome' } } })).toEqual(expected)
  })

  it('a "__proto__" group is an ordinary key, not the prototype', async () => {
    const result = (await run([{ k: '__proto__' }], [{ type: 'groupBy', field: 'k' }])) as Record<string, unknown>
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype)
    expect(Object.hasOwn(result, '__proto__')).toBe(true)
  })

  it.each([
    [
      'sort of an object',
      { a: 1 },
      [{ type: 'sort' }],
      /operations\[0\] \(sort\): needs a list, and the value is an object/,
    ],
    ['pick of a number', 5, [{ type: 'pick', fields: ['a'] }], /needs an object/],
    ['merge of a list holding a number', [{ a: 1 }, 2], [{ type: 'merge' }], /item 1 is a number/],
    [
      'a later step on the wrong kind',
      [1],
      [{ type: 'groupBy', field: 'a' }, { type: 'reverse' }],
      /operations\[1\] \(reverse\)/,
    ],
    [
      'a filter with a templated in that is no list',
      [1],
      [{ type: 'filter', rules: { field: '$item', operator: 'in', value: '{{$trigger.body}}' } }],
      /in needs a list/,
    ],
  ])('fails with transform_failed: %s', async (_name, input, operations, message) => {
    const attempt = run(input, operations)
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'transform_failed',
      retryable: false,
      message: expect.stringMatching(message),
    })
  })

  it(`works on at most ${maxTransformItems} items`, async () => {
    expect(await run(new Array(maxTransformItems).fill(1), [{ type: 'unique' }])).toEqual([1])
    await expect(run(new Array(maxTransformItems + 1).fill(1), [{ type: 'unique' }])).rejects.toMatchObject({
      code: 'transform_failed',
    })
  })
})

describe('transform: config', () => {
  it('needs input and 1-50 operations', () => {
    expect(transform.configSchema.safeParse({ operations: [{ type: 'reverse' }] }).success).toBe(false)
    expect(safe([]).success).toBe(false)
    expect(safe(new Array(50).fill({ type: 'reverse' })).success).toBe(true)
    expect(safe(new Array(51).fill({ type: 'reverse' })).success).toBe(false)
    expect(safe([{ type: 'shuffle' }]).success).toBe(false)
    expect(safe([{ type: 'reverse', extra: 1 }]).success).toBe(false)
  })
  it('bounds: flatten depth 1-10, slice within ±100000, 1-200 fields', () => {
    for (const [operation, ok] of [
      [{ type: 'flatten', depth: 0 }, false],
      [{ type: 'flatten', depth: 1 }, true],
      [{ type: 'flatten', depth: 10 }, true],
      [{ type: 'flatten', depth: 11 }, false],
      [{ type: 'slice', start: -100_001 }, false],
      [{ type: 'slice', start: -100_000 }, true],
      [{ type: 'slice', end: 100_000 }, true],
      [{ type: 'slice', end: 100_001 }, false],
      [{ type: 'pick', fields: [] }, false],
      [{ type: 'pick', fields: new Array(200).fill('a') }, true],
      [{ type: 'pick', fields: new Array(201).fill('a') }, false],
      [{ type: 'map', field: 'a', fields: { b: 'b' } }, false],
      [{ type: 'map' }, false],
      [{ type: 'map', field: 'a..b' }, false],
      [{ type: 'groupBy', field: '__proto__' }, false],
      [{ type: 'sort', order: 'up' }, false],
      [{ type: 'filter', rules: { field: '$item.a', operator: 'between', value: 1 } }, false],
      [{ type: 'filter', rules: { field: '{{= $item.a }}', operator: 'eq', value: 1 } }, false],
    ] as const)
      expect(safe([operation]).success, JSON.stringify(operation)).toBe(ok)
  })
  it('is checked on save: filter rules may read $item (not resolved early), a bad rule is refused', () => {
    const registry = createOperationRegistry()
    const step = (operations: unknown[]) => [
      { key: 't', type: 'transform', config: { input: '{{$trigger.body.rows}}', operations } },
    ]
    expect(() =>
      registry.checkSteps(
        step([{ type: 'filter', rules: { field: '$item.status', operator: 'eq', value: '{{$item.expected}}' } }]),
      ),
    ).not.toThrow()
    expect(() =>
      registry.checkSteps(step([{ type: 'filter', rules: { field: '$nope.status', operator: 'eq', value: 1 } }])),
    ).toThrow(/not available here/)
    expect(transform.rawPaths).toEqual(['operations[].rules'])
  })
})
