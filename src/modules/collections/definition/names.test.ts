import { describe, expect, it } from 'vitest'
import { AppError, type ErrorCode } from '../../../lib/errors.js'
import { checkCollectionName, checkFieldName, reservedCollectionNames } from './names.js'

const codeOf = (fn: () => unknown): ErrorCode | 'ok' => {
  try {
    fn()
    return 'ok'
  } catch (err) {
    if (err instanceof AppError) return err.code
    throw err
  }
}

// The spec's list, copied: the constant is checked against it.
const specReserved = [
  'auth',
  'users',
  'roles',
  'permissions',
  'databases',
  'files',
  'settings',
  'plugins',
  'api-keys',
  'modules',
  'system',
  'schema',
  'health',
  'metrics',
  'hooks',
  'webhooks',
]

const collectionRows: [unknown, ErrorCode | 'ok'][] = [
  ['articles', 'ok'],
  ['a', 'ok'],
  ['blog_posts_2024', 'ok'],
  [`a${'b'.repeat(49)}`, 'ok'],
  [`a${'b'.repeat(50)}`, 'invalid_name'],
  ['', 'invalid_name'],
  ['Articles', 'invalid_name'],
  ['2024_posts', 'invalid_name'],
  ['_private', 'invalid_name'],
  ['blog-posts', 'invalid_name'],
  ['blog posts', 'invalid_name'],
  ['café', 'invalid_name'],
  ['posts\n', 'invalid_name'],
  [42, 'invalid_name'],
  [null, 'invalid_name'],
  ['userss', 'ok'],
  ['user', 'ok'],
  ['sqlite_notes', 'reserved_name'],
  ['sqlite_', 'reserved_name'],
  // `sqlite` too: its derived names (sqlite__created_at__idx) would begin with sqlite_.
  ['sqlite', 'reserved_name'],
  ['sqlites', 'ok'],
  ['my_sqlite_notes', 'ok'],
  // Double underscores separate a collection's name in the names of the objects derived from it.
  ['qx__search', 'reserved_name'],
  ['ef__g', 'reserved_name'],
  ['a__', 'reserved_name'],
  ['a___b', 'reserved_name'],
  ['a_b_c', 'ok'],
  ['a_', 'ok'],
  ['Bad__name', 'invalid_name'],
  ['pg_notes', 'ok'],
  ...specReserved.map((name): [string, ErrorCode] => [name, 'reserved_name']),
]

const fieldRows: [unknown, ErrorCode | 'ok'][] = [
  ['title', 'ok'],
  ['x1', 'ok'],
  [`a${'b'.repeat(49)}`, 'ok'],
  [`a${'b'.repeat(50)}`, 'invalid_name'],
  ['Title', 'invalid_name'],
  ['first-name', 'invalid_name'],
  ['1st', 'invalid_name'],
  ['', 'invalid_name'],
  [undefined, 'invalid_name'],
  ['__proto__', 'invalid_name'],
  ['id', 'reserved_field'],
  ['created_at', 'reserved_field'],
  ['updated_at', 'reserved_field'],
  ['created_by', 'reserved_field'],
  ['updated_by', 'reserved_field'],
  ['deleted_at', 'reserved_field'],
  ['_version', 'reserved_field'],
  ['owned_by', 'reserved_field'],
  ['ids', 'ok'],
  ['version', 'ok'],
  ['rowid', 'reserved_field'],
  ['ctid', 'reserved_field'],
  ['xmin', 'reserved_field'],
  ['xmax', 'reserved_field'],
  ['cmin', 'reserved_field'],
  ['cmax', 'reserved_field'],
  ['tableoid', 'reserved_field'],
  ['oid', 'ok'],
  ['rank', 'ok'],
  ['rowids', 'ok'],
]

describe('collection names', () => {
  it('reserves exactly the spec list', () => {
    expect([...reservedCollectionNames].sort()).toEqual([...specReserved].sort())
  })

  it.each(collectionRows)('%j → %s', (name, code) => {
    expect(codeOf(() => checkCollectionName(name))).toBe(code)
  })

  it('says why a double underscore is refused', () => {
    expect(() => checkCollectionName('qx__search')).toThrow(
      /double underscores name the objects Plinth derives from a collection/,
    )
  })
})

describe('field names', () => {
  it.each(fieldRows)('%j → %s', (name, code) => {
    expect(codeOf(() => checkFieldName(name, 3))).toBe(code)
  })

  it('names the field and its index', () => {
    try {
      checkFieldName('Bad', 3)
      expect.unreachable()
    } catch (err) {
      expect((err as AppError).details).toEqual({ field: 'Bad', index: 3 })
      expect((err as AppError).status).toBe(400)
    }
  })
})
