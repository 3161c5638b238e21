import { describe, expect, it } from 'vitest'
import { evaluateExpression, expressionCodes, precomputeExpressions } from './expressions.js'

const data = { $trigger: { body: { items: [{ price: 2, qty: 3 }, { price: 5, qty: 1 }], name: 'Ada' } }, $steps: { calc: { result: 7 } }, $user: { id: 'u1' }, $now: '2026-01-01T00:00:00.000Z' }

describe('evaluateExpression', () => {
  const rows: [string, unknown][] = [
    ['$sum($trigger.body.items.(price * qty))', 11],
    ['$steps.calc.result + 1', 8],
    ['$uppercase($trigger.body.name)', 'ADA'],
    ['$trigger.body.items[price > 2].qty', 1],
    ['$trigger.body.items.price', [2, 5]],
    ['{ "who": $user.id }', { who: 'u1' }],
    ['$count($trigger.body.items) = 2', true],
    ['$.$steps.calc.result', 7],
    ['$trigger.body.nothing', undefined],
    ['function($x) { $x }', undefined],
    ['[1, function($x) { $x }]', [1]],
  ]
  it.each(rows)('%s', async (code, want) => {
    expect(await evaluateExpression(code, data)).toEqual(want)
  })

  it('keeps $now() a JSONata function (the run timestamp is the {{$now}} path)', async () => {
    expect(typeof (await evaluateExpression('$now()', data))).toBe('string')
  })

  const refused: [string, string, RegExp][] = [
    ['a syntax error', '$sum(', /Invalid expression/],
    ['endless recursion (time bound)', '( $f := function($n) { $f($n + 1) }; $f(0) )', /timeout after 1000 milliseconds|Stack overflow/],
    ['a long computation (time bound)', '$count($map([1..99999], function($x) { $sum($map([1..9999], function($y) { $y })) }))', /timeout after 1000 milliseconds/],
    ['the same through $eval', '$eval("( $f := function($n) { $f($n + 1) }; $f(0) )")', /timeout after 1000 milliseconds|Stack overflow/],
    ['a huge sequence', '[1..200000]', /maximum sequence length/],
    ['a catastrophic regex', '$match("aaaaaaaaaaaaaaaaaaaaaaaaaaaac", /(a+)+b/)', /Regular expression refused/],
  ]
  const hostile: string[] = [
    '( $f := $trigger.constructor.constructor; $f("return process.pid")() )',
    '( $f := $lookup($lookup($trigger, "constructor"), "constructor"); $f("return 42")() )',
    '( $f := "x".constructor.constructor; $f("return 42")() )',
  ]
  it.each(hostile)('never reaches JavaScript: %s', async (code) => {
    await expect(evaluateExpression(code, data)).rejects.toThrow(/non-function/)
    expect(await evaluateExpression('$trigger.__proto__', data)).toBeUndefined()
  })

  it.each(refused)('refuses %s', async (_name, code, message) => {
    await expect(evaluateExpression(code, data)).rejects.toThrow(message)
  })
})

describe('precomputeExpressions', () => {
  it('evaluates ahead and answers synchronously; a failure is thrown where it is asked for', async () => {
    const evaluate = await precomputeExpressions(['1 + 1', '$oops(', '1 + 1'], data)
    expect(evaluate('1 + 1', data)).toBe(2)
    expect(() => evaluate('$oops(', data)).toThrow(/Invalid expression/)
    expect(() => evaluate('2 + 2', data)).toThrow(/not evaluated/)
  })
  it('finds the codes of a template', () => {
    expect(expressionCodes('a {{= 1 + 1 }} b {{$trigger.x}} {{=$count($steps)}}')).toEqual(['1 + 1', '$count($steps)'])
    expect(expressionCodes('no tags')).toEqual([])
    expect(expressionCodes('{{ broken')).toEqual([])
  })
})
