import { describe, expect, it } from 'vitest'
import { ruleOperators } from '../rules.js'
import { testContext } from '../test-context.js'
import { condition } from './condition.js'

const data = { $trigger: { body: { status: 'paid', total: 50 } } }
const then = [{ key: 'yes', type: 'log', config: { message: 'paid' } }]
const otherwise = [{ key: 'no', type: 'stop', config: {} }]
const parse = (config: Record<string, unknown>) => condition.configSchema.parse(config)

describe('condition', () => {
  it('runs the then branch through the engine when the rules hold', async () => {
    const { ctx, nested } = testContext(data)
    const out = await condition.run(
      parse({ rules: { field: '$trigger.body.status', operator: 'eq', value: 'paid' }, then, else: otherwise }),
      ctx,
    )
    expect(out).toEqual({ result: true, branch: 'then', outputs: { yes: 'ran log' } })
    expect(nested).toEqual([[expect.objectContaining({ key: 'yes', type: 'log', onError: 'stop' })]])
  })
  it('runs the else branch when they do not', async () => {
    const { ctx, nested } = testContext(data)
    const out = await condition.run(
      parse({ rules: { _and: [{ field: '$trigger.body.total', operator: 'gt', value: 100 }] }, then, else: otherwise }),
      ctx,
    )
    expect(out).toEqual({ result: false, branch: 'else', outputs: { no: 'ran stop' } })
    expect(nested).toHaveLength(1)
  })
  it('outputs the result alone when there is no branch to run', async () => {
    const { ctx, nested } = testContext(data)
    expect(
      await condition.run(parse({ rules: { field: '$trigger.body.total', operator: 'lt', value: 100 } }), ctx),
    ).toEqual({ result: true, branch: null, outputs: {} })
    expect(
      await condition.run(parse({ rules: { field: '$trigger.body.total', operator: 'gt', value: 100 }, then }), ctx),
    ).toEqual({ result: false, branch: null, outputs: {} })
    expect(nested).toEqual([])
  })
  it('evaluates JSONata in rules', async () => {
    const { ctx } = testContext(data)
    expect(
      (
        await condition.run(
          parse({ rules: { field: '{{= $trigger.body.total * 2 }}', operator: 'eq', value: 100 } }),
          ctx,
        )
      ).result,
    ).toBe(true)
  })
  it('declares its branches as nested steps and keeps them and its rules raw', () => {
    expect(condition.nestedSteps).toEqual(['then', 'else'])
    expect(condition.rawPaths).toEqual(['rules', 'then', 'else'])
  })

  // Every operator of the spec's rule tree, each holding and not holding, through the operation itself.
  const body = {
    status: 'paid',
    total: 42,
    price: '9.50',
    tags: ['a', 'b'],
    none: null,
    empty: '',
    text: 'Hello World',
    when: '2026-03-01',
  }
  const leaf = (field: string, operator: string, value?: unknown, flags?: string) => ({
    field: `$trigger.body.${field}`,
    operator,
    ...(value === undefined ? {} : { value }),
    ...(flags ? { flags } : {}),
  })
  const operators: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['eq', leaf('total', 'eq', '42'), leaf('status', 'eq', 'open')],
    ['neq', leaf('status', 'neq', 'open'), leaf('status', 'neq', 'paid')],
    ['gt', leaf('total', 'gt', 41), leaf('total', 'gt', 42)],
    ['gte', leaf('total', 'gte', 42), leaf('total', 'gte', 43)],
    ['lt', leaf('when', 'lt', '2026-04-01'), leaf('price', 'lt', 9)],
    ['lte', leaf('price', 'lte', 9.5), leaf('total', 'lte', 41)],
    ['in', leaf('status', 'in', ['open', 'paid']), leaf('status', 'in', ['open'])],
    ['nin', leaf('status', 'nin', ['open']), leaf('status', 'nin', ['paid'])],
    ['contains', leaf('tags', 'contains', 'b'), leaf('text', 'contains', 'world')],
    ['starts_with', leaf('text', 'starts_with', 'Hello'), leaf('text', 'starts_with', 'World')],
    ['ends_with', leaf('text', 'ends_with', 'World'), leaf('text', 'ends_with', 'Hello')],
    ['is_null', leaf('none', 'is_null'), leaf('status', 'is_null')],
    ['is_empty', leaf('empty', 'is_empty'), leaf('empty', 'is_empty', false)],
    ['matches', leaf('text', 'matches', '^hello\\s', 'i'), leaf('text', 'matches', '^world')],
  ]
  it('covers every operator of the rule tree', () => {
    expect(operators.map(([name]) => name).sort()).toEqual([...ruleOperators].sort())
  })
  it.each(operators)('%s holds and does not hold', async (_name, holds, fails) => {
    const { ctx } = testContext({ $trigger: { body } })
    expect((await condition.run(parse({ rules: holds }), ctx)).result).toBe(true)
    expect((await condition.run(parse({ rules: fails }), ctx)).result).toBe(false)
    expect((await condition.run(parse({ rules: { _and: [holds, fails] } }), ctx)).result).toBe(false)
    expect((await condition.run(parse({ rules: { _or: [fails, holds] } }), ctx)).result).toBe(true)
  })

  it('bounds: groups nest 10 deep, 100 comparisons, fields of 1000 characters, patterns of 500, 100 steps per branch', () => {
    const ok = (config: Record<string, unknown>) => condition.configSchema.safeParse(config).success
    const nest = (depth: number) => {
      let tree: Record<string, unknown> = leaf('total', 'gt', 1)
      for (let i = 0; i < depth; i++) tree = { _and: [tree] }
      return tree
    }
    expect(ok({ rules: nest(10) })).toBe(true)
    expect(ok({ rules: nest(11) })).toBe(false)
    expect(ok({ rules: { _or: new Array(100).fill(leaf('total', 'gt', 1)) } })).toBe(true)
    expect(ok({ rules: { _or: new Array(101).fill(leaf('total', 'gt', 1)) } })).toBe(false)
    expect(ok({ rules: { field: `$trigger.body.${'a'.repeat(1000 - 14)}`, operator: 'is_null' } })).toBe(true)
    expect(ok({ rules: { field: `$trigger.body.${'a'.repeat(1001 - 14)}`, operator: 'is_null' } })).toBe(false)
    expect(ok({ rules: leaf('text', 'matches', 'a'.repeat(500)) })).toBe(true)
    expect(ok({ rules: leaf('text', 'matches', 'a'.repeat(501)) })).toBe(false)
    expect(ok({ rules: leaf('text', 'matches', '(a+)+$') })).toBe(true)
    expect(ok({ rules: leaf('text', 'matches', '(?<=a)b') })).toBe(false)
    expect(ok({ rules: leaf('total', 'between', 1) })).toBe(false)
    expect(ok({ rules: leaf('total', 'in', 'paid') })).toBe(false)
    const steps = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ key: `s${i}`, type: 'log', config: { message: 'x' } }))
    expect(ok({ rules: leaf('total', 'gt', 1), then: steps(100), else: steps(100) })).toBe(true)
    expect(ok({ rules: leaf('total', 'gt', 1), then: steps(101) })).toBe(false)
    expect(ok({ rules: leaf('total', 'gt', 1), else: steps(101) })).toBe(false)
    expect(ok({ then: steps(1) })).toBe(false)
  })
})
