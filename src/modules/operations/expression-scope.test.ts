import { describe, expect, it } from 'vitest'
import { narrowScope, needsOf } from './expression-scope.js'

// What crosses to the evaluator process: the variables an expression names (or only the keys it reads
// right after them), everything when it reads its input.
const needs = (code: string) => {
  const found = needsOf(code)
  const variables = Object.fromEntries(
    [...found.variables]
      .filter(([name]) => ['trigger', 'steps', 'user', 'flow', 'run', 'data'].includes(name))
      .map(([name, need]) => [name, need === 'all' ? 'all' : [...need].sort()]),
  )
  return { input: found.input, variables }
}

describe('needsOf', () => {
  const rows: [string, boolean, Record<string, unknown>][] = [
    ['$steps.calc.result + 1', false, { steps: ['calc'] }],
    ['$sum($trigger.body.items.(price * qty))', false, { trigger: ['body'] }],
    ['$trigger.body.items[price > 2].qty', false, { trigger: ['body'] }],
    ['$trigger.body.list[$type($) = "number"]', false, { trigger: ['body'] }],
    ['{ "who": $user.id, "n": $steps.a.n + $steps.b.n }', false, { user: ['id'], steps: ['a', 'b'] }],
    ['$keys($steps)', false, { steps: 'all' }],
    ['$steps[0].x', false, { steps: 'all' }],
    ['($s := $steps; $s.a)', false, { steps: 'all' }],
    ['$steps.a{ "x": b }', false, { steps: ['a'] }],
    ['$map($steps.a.rows, function($r) { $r.n * 2 })', false, { steps: ['a'] }],
    // The input: a bare name, $ and $$ at the top, %, $eval.
    ['country & "/" & extra', true, {}],
    ['$.$steps.calc.result', true, { steps: 'all' }],
    ['$$.x', true, {}],
    ['$keys($)', true, {}],
    ['$map([1, 2], function($v) { $ })', true, {}],
    ['$eval("$steps")', true, {}],
    ['$trigger.body.%.x', true, { trigger: ['body'] }],
    ['*', true, {}],
    ['**.secret', true, {}],
    // Does not parse: nothing is sent (the evaluator reports the error).
    ['$sum(', false, {}],
  ]
  it.each(rows)('%s', (code, input, variables) => {
    expect(needs(code)).toEqual({ input, variables })
  })
})

describe('narrowScope', () => {
  const data = {
    $trigger: { body: { a: 1 }, method: 'POST' },
    $steps: { a: { n: 1 }, big: { rows: ['x'] } },
    $user: { id: 'u1' },
    $now: 'T',
  }
  it('sends only the roots and keys the expressions read, across all of them', () => {
    expect(narrowScope({ kind: 'context', data }, ['$steps.a.n', '$user.id'])).toEqual({
      kind: 'context',
      data: { $steps: { a: { n: 1 } }, $user: { id: 'u1' } },
    })
    expect(narrowScope({ kind: 'context', data }, ['$steps.a.n', '$count($steps)'])).toEqual({
      kind: 'context',
      data: { $steps: data.$steps },
    })
    expect(narrowScope({ kind: 'context', data }, ['1 + 1'])).toEqual({ kind: 'context', data: {} })
  })
  it("sends everything for an expression too long to parse on the server's thread (or too many at once)", () => {
    expect(narrowScope({ kind: 'context', data }, [`$steps.a.n${' + 1'.repeat(300)}`])).toEqual({
      kind: 'context',
      data,
    })
    expect(
      narrowScope(
        { kind: 'context', data },
        Array.from({ length: 9 }, (_, i) => `$steps.a.n${' + 1'.repeat(110)} + ${i}`),
      ),
    ).toEqual({ kind: 'context', data })
  })
  it('sends everything when an expression reads its input', () => {
    expect(narrowScope({ kind: 'context', data }, ['$steps.a.n', '$.$now'])).toEqual({ kind: 'context', data })
  })
  it("run_expression's variables: the input variable goes whole when read, the others narrowed", () => {
    const variables = { trigger: data.$trigger, steps: data.$steps, data: { q: 2 } }
    expect(narrowScope({ kind: 'variables', variables, input: 'data' }, ['q * $steps.a.n'])).toEqual({
      kind: 'variables',
      variables: { steps: { a: { n: 1 } }, data: { q: 2 } },
      input: 'data',
    })
    expect(narrowScope({ kind: 'variables', variables, input: 'data' }, ['$trigger.method'])).toEqual({
      kind: 'variables',
      variables: { trigger: { method: 'POST' } },
      input: null,
    })
  })
})
