import { describe, expect, it } from 'vitest'
import { evaluateBatch, evaluateExpression, expressionCodes, precomputeExpressions } from './expressions.js'

const data = {
  $trigger: {
    body: {
      items: [
        { price: 2, qty: 3 },
        { price: 5, qty: 1 },
      ],
      name: 'Ada',
    },
  },
  $steps: { calc: { result: 7 } },
  $user: { id: 'u1' },
  $now: '2026-01-01T00:00:00.000Z',
}

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
    [
      'endless recursion (time bound)',
      '( $f := function($n) { $f($n + 1) }; $f(0) )',
      /timeout after 1000 milliseconds|Stack overflow/,
    ],
    [
      'a long computation (time bound)',
      '$count($map([1..99999], function($x) { $sum($map([1..9999], function($y) { $y })) }))',
      /timeout after 1000 milliseconds/,
    ],
    [
      'the same through $eval',
      '$eval("( $f := function($n) { $f($n + 1) }; $f(0) )")',
      /timeout after 1000 milliseconds|Stack overflow/,
    ],
    ['a huge sequence', '[1..200000]', /maximum sequence length/],
    ['a regex RE2 cannot run', '$match("aa", /(a)\\1/)', /Regular expression refused: backreferences/],
    // Memory: what the evaluator builds is bounded where it is built, before anything large exists.
    [
      'a string doubled past the bound',
      '($f := function($s, $n){ $n = 0 ? $length($s) : $f($s & $s, $n - 1) }; $f("x", 28))',
      /string of 8388608 characters is longer than the 5000000/,
    ],
    ['a huge $pad', '$pad("", 50000000, "ab")', /\$pad would be 50000000 characters/],
    ['a huge $join', '$join([1..100000].("x"), $pad("", 100))', /\$join would be 10099900 characters/],
    ['a huge $string', '$string([1..1000].($pad("", 10000)))', /\$string would be/],
    ['a list built past the bound', '$split($pad("", 200000), "")', /list of 200000 items is longer than the 100000/],
    [
      'a result past the bound (one string held ten times)',
      '($s := $pad("", 4000000); [1..10].($s))',
      /result would be over 20000000 characters/,
    ],
    // Time: a regular expression that passes the shape check but backtracks for ages is ended with its process.
    [
      'a regular expression no check can stop',
      '$match($pad("", 100000, "a") & "!", /[a-z]{990}!/)',
      /did not finish within 1000 ms \(its evaluator was stopped\)/,
    ],
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

describe('evaluateBatch', () => {
  it('answers each expression of a batch; one that ends its evaluator fails alone, those after it are not evaluated', async () => {
    const slow = '$match($pad("", 100000, "a") & "!", /[a-z]{990}!/)'
    const outcomes = await evaluateBatch(['1 + 1', slow, '2 + 2'], { kind: 'context', data }, 500)
    expect(outcomes).toEqual([
      { ok: true, value: 2 },
      { ok: false, kind: 'timeout', message: expect.stringContaining('did not finish within 500 ms') },
      { ok: false, kind: 'failed', message: expect.stringContaining('Not evaluated') },
    ])
    // The evaluator that was killed is replaced: the next batch runs.
    expect(await evaluateBatch(['$steps.calc.result * 2'], { kind: 'context', data }, 500)).toEqual([
      { ok: true, value: 14 },
    ])
  })
  it('evaluates many batches at once, each to its own answer', async () => {
    const batches = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        evaluateBatch([`${i} * $steps.calc.result`], { kind: 'context', data }, 1000),
      ),
    )
    expect(batches.map(([outcome]) => (outcome!.ok ? outcome!.value : null))).toEqual([0, 7, 14, 21, 28, 35, 42, 49])
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
