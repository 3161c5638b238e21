import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { refuseProtoKey } from './proto-key.js'

function refused(text: string, lines = false): boolean {
  try {
    refuseProtoKey(text, lines)
    return false
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('invalid_request')
    return true
  }
}

describe('refuseProtoKey', () => {
  it.each([
    ['a top-level key', '{"__proto__":{"admin":true}}'],
    ['a nested key', '{"a":{"b":[{"__proto__":1}]}}'],
    ['a key beside others', '{"title":"x","__proto__":null}'],
    ['a key spelled with \\u escapes', '{"\\u005f_proto__":1}'],
    [
      'a key spelled entirely with \\u escapes',
      '{"\\u005F\\u005F\\u0070\\u0072\\u006f\\u0074\\u006F\\u005f\\u005f":1}',
    ],
  ])('refuses %s', (_, text) => {
    expect(refused(text)).toBe(true)
  })

  it.each([
    ['no such key', '{"title":"x"}'],
    ['the word as a value', '{"title":"__proto__"}'],
    ['the word in an array', '["__proto__"]'],
    ['a longer key holding it', '{"__proto__x":1,"x__proto__":2}'],
    ['constructor and prototype keys (refused later as unknown fields)', '{"constructor":{"prototype":1}}'],
    ['malformed JSON (the parser reports it)', '{"__proto__":'],
    ['\\u escapes of other text', '{"title":"caf\\u00e9"}'],
  ])('lets through %s', (_, text) => {
    expect(refused(text)).toBe(false)
  })

  it('checks NDJSON line by line, refusing the body when any line has the key', () => {
    expect(refused('{"a":1}\n{"__proto__":1}\n', true)).toBe(true)
    expect(refused('{"a":1}\n{"b":"__proto__"}\nnot json __proto__\n', true)).toBe(false)
  })
})
