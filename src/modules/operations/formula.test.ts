import { describe, expect, it } from 'vitest'
import { evaluateFormula, FormulaError } from './formula.js'

describe('evaluateFormula', () => {
  const valid: [string, number][] = [
    ['1 + 2', 3],
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['10 / 4', 2.5],
    ['10 % 4', 2],
    ['2 ^ 10', 1024],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['- - 3', 3],
    ['+3', 3],
    ['2 - -3', 5],
    ['.5 + 1.5', 2],
    ['1e3 + 2E-1', 1000.2],
    ['min(3, 1, 2)', 1],
    ['max(3, 1, 2) * 2', 6],
    ['abs(-7.5)', 7.5],
    ['round(2.5) + round(-2.5)', 0],
    ['round(2.4)', 2],
    ['floor(-1.5)', -2],
    ['ceil(1.2)', 2],
    ['sqrt(16)', 4],
    ['  1+1  ', 2],
    ['0 * -1', 0],
    ['12', 12],
  ]
  it.each(valid)('%s = %d', (text, want) => {
    expect(evaluateFormula(text)).toBe(want)
  })

  const invalid: [string, RegExp][] = [
    ['', /empty/],
    ['   ', /empty/],
    ['1 +', /ends too early/],
    ['(1 + 2', /expected "\)"/],
    ['1 + 2)', /unexpected "\)"/],
    ['1 / 0', /division by zero/],
    ['1 % 0', /division by zero/],
    ['10 ^ 400', /not a finite number/],
    ['sqrt(-1)', /not a finite number/],
    ['foo(1)', /unknown name "foo"/],
    ['abs(1, 2)', /abs takes 1 argument/],
    ['min()', /min takes at least 1/],
    ['1 2', /unexpected "2"/],
    ['abs', /expected "\("/],
    ['a + 1', /unknown name "a"/],
    // Hostile: nothing reaches JavaScript.
    ['constructor', /unknown name "constructor"/],
    ['__proto__(1)', /unknown name "__proto__"/],
    ['toString(1)', /unknown name "toString"/],
    ['process.exit(1)', /unexpected "\."/],
    ['1; 2', /unexpected ";"/],
    ['"1"', /unexpected "\\""/],
    ['`1`', /unexpected "`"/],
    ['[1]', /unexpected "\["/],
    ['1 = 1', /unexpected "="/],
    ['this', /unknown name "this"/],
    ['Math.PI', /unexpected "\."/],
    ['x'.repeat(1001), /longer than 1000/],
    ['('.repeat(60) + '1' + ')'.repeat(60), /nests deeper than 50/],
    ['-'.repeat(60) + '1', /nests deeper than 50/],
    ['2^'.repeat(60) + '2', /nests deeper|not a finite/],
  ]
  it.each(invalid)('refuses %j', (text, message) => {
    expect(() => evaluateFormula(text)).toThrow(FormulaError)
    expect(() => evaluateFormula(text)).toThrow(message)
  })

  it('names the offset of what is wrong', () => {
    expect(() => evaluateFormula('1 + $')).toThrow('unexpected "$" (at offset 4)')
  })
})
