import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { isAppError } from '../../lib/errors.js'
import { ftsExpression, inColumns } from './fts-query.js'

describe('ftsExpression', () => {
  it.each([
    ['alpha', '"alpha"'],
    ['  alpha   beta ', '"alpha" "beta"'],
    ['"exact phrase" more', '"exact phrase" "more"'],
    ['prog*', '"prog" *'],
    ['"two wor"*', '"two wor" *'],
    ['alpha OR beta', '"alpha" "OR" "beta"'],
    ['NOT alpha', '"NOT" "alpha"'],
    ['title:secret', '"title:secret"'],
    ['{c0} : x', '"{c0}" "x"'],
    ['(a) ^b NEAR(c d)', '"(a)" "^b" "NEAR(c" "d)"'],
    ["it's", '"it\'s"'],
    ['a"b"c', '"a" "b" "c"'],
    ['&& alpha', '"alpha"'],
    ['wörld', '"wörld"'],
    ['a\u0000b', '"a" "b"'],
    ['"a\u0000b" c\u0001d\u007f', '"a b" "c" "d"'],
  ])('%s → %s', (text, expected) => {
    expect(ftsExpression(text)).toBe(expected)
  })

  it.each(['', '   ', '&& ||', '"open phrase', '"', '*', '""', 'a"b'])('refuses %j with invalid_request', (text) => {
    let caught: unknown
    try {
      ftsExpression(text)
    } catch (err) {
      caught = err
    }
    expect(isAppError(caught) && caught.code).toBe('invalid_request')
  })

  it('every expression it makes is one FTS5 accepts, inside a column filter too', () => {
    const db = new Database(':memory:')
    db.exec('create virtual table t using fts5(c0, c1)')
    db.prepare('insert into t values (?, ?)').run('Hello wörld programming', 'second body')
    const hostile = [
      'a\u0000b',
      'x\u0000"y"',
      'a AND',
      'OR',
      'NOT NOT',
      'NEAR(',
      '(((x',
      'x)',
      '^x',
      'c0:hello',
      '{c1}:body',
      '-x',
      '+y',
      'a"b"c',
      'x* *y',
      'hello*',
      'prog*',
    ]
    for (const text of hostile) {
      const expression = ftsExpression(text)
      expect(() => db.prepare('select * from t where t match ?').all(expression), text).not.toThrow()
      expect(
        () => db.prepare('select * from t where t match ?').all(inColumns(['c0', 'c1'], expression)),
        text,
      ).not.toThrow()
    }
    expect(db.prepare('select c0 from t where t match ?').all(inColumns(['c0'], ftsExpression('prog*')))).toHaveLength(
      1,
    )
    expect(db.prepare('select c0 from t where t match ?').all(inColumns(['c1'], ftsExpression('hello')))).toHaveLength(
      0,
    )
    db.close()
  })
})
