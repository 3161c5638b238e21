import { describe, expect, it } from 'vitest'
import { checkKey, checkPrefix } from './keys.js'

describe('checkKey', () => {
  it.each([
    'projects/p1/f1',
    'projects/p1/f1/photo.png',
    'a',
    'projects/p1/Fête d’été.png',
    'projects/p1/a:b',
    'x'.repeat(1024),
  ])('accepts %s', (key) => {
    expect(checkKey(key)).toBe(key)
  })

  it.each([
    ['empty', ''],
    ['not a string', 42],
    ['parent segment', '../x'],
    ['parent inside', 'projects/../x'],
    ['parent at the end', 'projects/..'],
    ['two dots in a name', 'projects/a..b'],
    ['absolute', '/etc/passwd'],
    ['drive letter', 'C:/x'],
    ['backslash', 'projects\\x'],
    ['NUL', 'projects/a\0'],
    ['newline', 'projects/a\nb'],
    ['DEL', 'projects/a\u007f'],
    ['empty segment', 'projects//a'],
    ['dot segment', 'projects/./a'],
    ['trailing slash', 'projects/a/'],
    ['too long', 'x'.repeat(1025)],
    ['too long in bytes', 'é'.repeat(513)],
  ])('refuses %s', (_, key) => {
    expect(() => checkKey(key)).toThrow(expect.objectContaining({ code: 'invalid_request' }))
  })
})

describe('checkPrefix', () => {
  it.each(['', 'projects/', 'projects/p1', 'projects/p1/'])('accepts %j', (prefix) => {
    expect(checkPrefix(prefix)).toBe(prefix)
  })

  it.each(['../', '/', '/projects', 'projects//', 'projects/./', 'projects/.', 'a\\b', 'a..'])(
    'refuses %j',
    (prefix) => {
      expect(() => checkPrefix(prefix)).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    },
  )
})
