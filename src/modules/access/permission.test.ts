import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { actionImplies, actions, isResource, parsePermission, permissionCovers, resourceCovers } from './permission.js'

describe('parsePermission: valid strings', () => {
  const rows: { input: string; resource: string; action: string }[] = [
    { input: 'collections/articles:read', resource: 'collections/articles', action: 'read' },
    { input: 'collections/*:read', resource: 'collections/*', action: 'read' },
    { input: 'collections/blog_posts-2:update', resource: 'collections/blog_posts-2', action: 'update' },
    { input: 'schema/*:create', resource: 'schema/*', action: 'create' },
    { input: 'system/files:create', resource: 'system/files', action: 'create' },
    { input: 'system/audit-log:read', resource: 'system/audit-log', action: 'read' },
    { input: 'system/databases:manage', resource: 'system/databases', action: 'manage' },
    { input: 'instance/projects:create', resource: 'instance/projects', action: 'create' },
    { input: '*:manage', resource: '*', action: 'manage' },
    { input: 'collections/a:write', resource: 'collections/a', action: 'write' },
    { input: 'collections/a:execute', resource: 'collections/a', action: 'execute' },
    { input: 'collections/a:transfer', resource: 'collections/a', action: 'transfer' },
    { input: 'collections/a:hard_delete', resource: 'collections/a', action: 'hard_delete' },
    { input: 'collections/a:view_deleted', resource: 'collections/a', action: 'view_deleted' },
    { input: 'collections/a:purge_deleted', resource: 'collections/a', action: 'purge_deleted' },
  ]
  it.each(rows)('$input', ({ input, resource, action }) => {
    expect(parsePermission(input)).toEqual({ resource, action })
  })

  it('accepts every action the spec lists (core-api.md § Authentication, 6)', () => {
    const spec = [
      'read',
      'create',
      'update',
      'delete',
      'write',
      'manage',
      'execute',
      'transfer',
      'hard_delete',
      'view_deleted',
      'purge_deleted',
    ]
    expect([...actions].sort()).toEqual([...spec].sort())
    for (const action of spec) expect(parsePermission(`collections/x:${action}`).action).toBe(action)
  })
})

describe('parsePermission: invalid strings are invalid_request', () => {
  const rows: { name: string; input: string }[] = [
    { name: 'empty', input: '' },
    { name: 'no colon', input: 'collections/articles' },
    { name: 'no resource', input: ':read' },
    { name: 'no action', input: 'collections/articles:' },
    { name: 'unknown action', input: 'collections/articles:fly' },
    { name: 'action in upper case', input: 'collections/articles:READ' },
    { name: 'resource in upper case', input: 'Collections/articles:read' },
    { name: 'space in the resource', input: 'collections/my articles:read' },
    { name: 'empty segment', input: 'collections//articles:read' },
    { name: 'trailing slash', input: 'collections/:read' },
    { name: 'partial wildcard', input: 'collections/art*:read' },
    { name: 'double wildcard', input: '**:read' },
    { name: 'colon inside the resource', input: 'collections/a:b:read' },
    { name: 'path traversal', input: 'collections/../system:read' },
    { name: 'leading slash', input: '/collections/articles:read' },
    { name: 'over 200 characters', input: `collections/${'a'.repeat(200)}:read` },
  ]
  it.each(rows)('$name: "$input"', ({ input }) => {
    let thrown: unknown
    try {
      parsePermission(input)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(AppError)
    expect((thrown as AppError).code).toBe('invalid_request')
    expect((thrown as AppError).status).toBe(400)
  })

  it('names at most 100 characters of the refused input', () => {
    const input = `${'x'.repeat(300)}:read`
    try {
      parsePermission(input)
      expect.unreachable()
    } catch (err) {
      expect((err as AppError).details).toEqual({ permission: input.slice(0, 100) })
    }
  })
})

describe('isResource', () => {
  it.each(['*', 'collections', 'collections/*', 'collections/a-b_c', 'system/files', 'schema/*'])('accepts %s', (r) => {
    expect(isResource(r)).toBe(true)
  })
  it.each(['', '*/x', 'Collections', '1collections', 'collections/*x', 'collections/a.b', 'collections/'])(
    'refuses %s',
    (r) => {
      expect(isResource(r)).toBe(false)
    },
  )
})

describe('resourceCovers(granted, requested)', () => {
  const rows: { granted: string; requested: string; covers: boolean }[] = [
    { granted: 'collections/articles', requested: 'collections/articles', covers: true },
    { granted: 'collections/articles', requested: 'collections/article', covers: false },
    { granted: 'collections/articles', requested: 'collections/articles_v2', covers: false },
    { granted: 'collections/articles', requested: 'collections/*', covers: false },
    { granted: 'collections/*', requested: 'collections/articles', covers: true },
    { granted: 'collections/*', requested: 'collections/*', covers: true },
    { granted: 'collections/*', requested: 'system/files', covers: false },
    { granted: 'collections/*', requested: 'collectionsx/articles', covers: false },
    { granted: 'collections/*', requested: 'collections', covers: false },
    { granted: 'schema/*', requested: 'schema/*', covers: true },
    { granted: 'schema/*', requested: 'schema/articles', covers: true },
    { granted: 'system/files', requested: 'system/files', covers: true },
    { granted: 'system/files', requested: 'system/users', covers: false },
    { granted: 'system/*', requested: 'system/users', covers: true },
    { granted: 'system/*', requested: 'collections/articles', covers: false },
    { granted: '*', requested: 'collections/articles', covers: true },
    { granted: '*', requested: 'collections/*', covers: true },
    { granted: '*', requested: 'instance/projects', covers: true },
    { granted: '*', requested: '*', covers: true },
    { granted: 'collections/*', requested: '*', covers: false },
    { granted: 'collections/articles', requested: '*', covers: false },
  ]
  it.each(rows)('$granted covers $requested: $covers', ({ granted, requested, covers }) => {
    expect(resourceCovers(granted, requested)).toBe(covers)
  })
})

describe('actionImplies(granted, requested)', () => {
  const others = [
    'read',
    'create',
    'update',
    'delete',
    'execute',
    'transfer',
    'hard_delete',
    'view_deleted',
    'purge_deleted',
  ] as const
  const rows: { granted: string; requested: string; implies: boolean }[] = [
    // Every action implies itself.
    ...actions.map((a) => ({ granted: a, requested: a, implies: true })),
    // manage implies every action.
    ...actions.map((a) => ({ granted: 'manage', requested: a, implies: true })),
    // write implies create, update and delete, and nothing else.
    { granted: 'write', requested: 'create', implies: true },
    { granted: 'write', requested: 'update', implies: true },
    { granted: 'write', requested: 'delete', implies: true },
    { granted: 'write', requested: 'read', implies: false },
    { granted: 'write', requested: 'transfer', implies: false },
    { granted: 'write', requested: 'hard_delete', implies: false },
    { granted: 'write', requested: 'execute', implies: false },
    { granted: 'write', requested: 'view_deleted', implies: false },
    { granted: 'write', requested: 'purge_deleted', implies: false },
    { granted: 'write', requested: 'manage', implies: false },
    // No other action implies anything beyond itself.
    ...others.flatMap((g) =>
      actions.filter((r) => r !== g).map((r) => ({ granted: g as string, requested: r as string, implies: false })),
    ),
  ]
  it.each(rows)('$granted implies $requested: $implies', ({ granted, requested, implies }) => {
    expect(actionImplies(granted, requested)).toBe(implies)
  })
})

describe('permissionCovers', () => {
  const rows: { granted: string; requested: string; covers: boolean }[] = [
    { granted: 'collections/*:manage', requested: 'collections/articles:hard_delete', covers: true },
    { granted: 'collections/*:write', requested: 'collections/articles:delete', covers: true },
    { granted: 'collections/*:write', requested: 'collections/articles:read', covers: false },
    { granted: 'collections/articles:manage', requested: 'collections/notes:read', covers: false },
    { granted: '*:read', requested: 'system/users:read', covers: true },
    { granted: '*:read', requested: 'system/users:update', covers: false },
  ]
  it.each(rows)('$granted covers $requested: $covers', ({ granted, requested, covers }) => {
    expect(permissionCovers(parsePermission(granted), parsePermission(requested))).toBe(covers)
  })
})
