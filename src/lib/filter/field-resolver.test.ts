import { describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import type { FieldPath } from './ast.js'
import { createSchemaResolver, type ColumnKind } from './field-resolver.js'

const resolver = createSchemaResolver({
  name: 'text',
  age: 'integer',
  score: 'number',
  active: 'boolean',
  meta: 'json',
})

const codeOf = (fn: () => unknown): string => {
  try {
    fn()
  } catch (err) {
    return err instanceof AppError ? err.code : `not an AppError: ${String(err)}`
  }
  return 'no error'
}

describe('createSchemaResolver', () => {
  it.each([
    { path: ['name'], expected: { column: 'name', jsonPath: [], type: 'text' } },
    { path: ['age'], expected: { column: 'age', jsonPath: [], type: 'integer' } },
    { path: ['meta'], expected: { column: 'meta', jsonPath: [], type: 'json' } },
    { path: ['meta', 'size'], expected: { column: 'meta', jsonPath: ['size'], type: 'json' } },
    { path: ['meta', 'dims', 'w'], expected: { column: 'meta', jsonPath: ['dims', 'w'], type: 'json' } },
  ])('resolves $path', ({ path, expected }) => {
    const resolved = resolver.resolve(path as unknown as FieldPath)
    expect(resolved).toEqual(expected)
    expect(Object.isFrozen(resolved) && Object.isFrozen(resolved.jsonPath)).toBe(true)
  })

  it.each([
    { name: 'unknown column', path: ['nope'] },
    { name: 'case differs', path: ['Name'] },
    { name: 'path into a text column', path: ['name', 'length'] },
    { name: 'path into a number column', path: ['age', 'x'] },
    { name: 'path into a boolean column', path: ['active', 'x'] },
    { name: 'inherited toString', path: ['toString'] },
    { name: 'inherited constructor', path: ['constructor'] },
    { name: 'inherited hasOwnProperty', path: ['hasOwnProperty'] },
    { name: '__proto__ as a column', path: ['__proto__'] },
    { name: '__proto__ inside JSON', path: ['meta', '__proto__'] },
    { name: 'constructor inside JSON', path: ['meta', 'constructor'] },
    { name: 'quote inside a JSON key', path: ['meta', 'a"b'] },
    { name: 'JSON path syntax inside a key', path: ['meta', '$[0]'] },
    { name: 'dot inside a key', path: ['meta', 'a.b'] },
    { name: 'empty key', path: ['meta', ''] },
    { name: 'key with a space', path: ['meta', 'a b'] },
    { name: 'key with a NUL', path: ['meta', 'a\u0000'] },
    { name: 'number as a key', path: ['meta', 1] },
    { name: 'array as a key', path: ['meta', ['size']] },
    { name: 'injection as a column', path: ['name; drop table x'] },
    { name: 'empty path', path: [] },
  ])('refuses $name with invalid_request', ({ path }) => {
    expect(codeOf(() => resolver.resolve(path as unknown as FieldPath))).toBe('invalid_request')
  })

  it('names the field without echoing hostile input at length', () => {
    try {
      resolver.resolve([`x${'y'.repeat(200)}`])
      expect.unreachable()
    } catch (err) {
      expect((err as AppError).message.length).toBeLessThan(100)
    }
  })

  it.each([
    { name: 'a column name with a quote', columns: { 'a"b': 'text' } },
    { name: 'a dotted column name', columns: { 'a.b': 'text' } },
    { name: 'an empty column name', columns: { '': 'text' } },
    { name: 'an unknown kind', columns: { a: 'varchar' } },
    { name: 'a kind that is not a string', columns: { a: 1 } },
    { name: 'a null column', columns: { a: null } },
    { name: 'a column spec with an unknown kind', columns: { a: { type: 'date', values: { kind: 'string' } } } },
  ])('refuses $name with internal', ({ columns }) => {
    expect(codeOf(() => createSchemaResolver(columns as unknown as Record<string, ColumnKind>))).toBe('internal')
  })

  it('declares the values a column takes, never those of a path inside it', () => {
    const date = { kind: 'string', format: 'date' } as const
    const r = createSchemaResolver({
      day: { type: 'text', values: date },
      label: { type: 'json', values: { kind: 'string' } },
      age: 'integer',
    })
    expect(r.resolve(['day'])).toEqual({ column: 'day', jsonPath: [], type: 'text', values: date })
    expect(r.resolve(['label'])).toEqual({ column: 'label', jsonPath: [], type: 'json', values: { kind: 'string' } })
    expect(r.resolve(['label', 'en'])).toEqual({ column: 'label', jsonPath: ['en'], type: 'json' })
    expect(r.resolve(['age'])).not.toHaveProperty('values')
  })

  it('is not changed by later edits to the column map', () => {
    const columns: Record<string, ColumnKind> = { a: 'text' }
    const r = createSchemaResolver(columns)
    columns.b = 'text'
    columns.a = 'json'
    expect(codeOf(() => r.resolve(['b']))).toBe('invalid_request')
    expect(r.resolve(['a']).type).toBe('text')
  })
})
