import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { builtInRoles } from './built-in-roles.js'
import { isKnownResource, knownResourceForms, parseCapability } from './resources.js'

describe('isKnownResource', () => {
  it.each([
    '*',
    'collections/*',
    'collections/articles',
    'collections/blog_posts-2',
    'schema/*',
    'system/*',
    'system/files',
    'system/users',
    'system/roles',
    'system/settings',
    'system/api-keys',
    'system/audit-log',
    'system/automate',
    'system/databases',
    'system/storage-connections',
    'system/webhooks',
    'system/search-indexes',
    'system/lenses',
    'system/views',
    'instance/*',
    'instance/projects',
  ])('knows %s', (resource) => {
    expect(isKnownResource(resource)).toBe(true)
  })

  it.each([
    'books',
    'collections',
    'collections/',
    'collections/a/b',
    'collections/Articles',
    'schema',
    'schema/articles',
    'system',
    'system/books',
    'system/files/x',
    'instance/tenants',
    'tenants/*',
    '*/*',
  ])('does not know %s', (resource) => {
    expect(isKnownResource(resource)).toBe(false)
  })

  it("knows every resource of the built-in roles' default grants", () => {
    for (const role of builtInRoles)
      for (const grant of role.grants) expect(isKnownResource(grant.resource), grant.resource).toBe(true)
  })
})

describe('parseCapability', () => {
  it('parses a known capability', () => {
    expect(parseCapability('collections/notes:read')).toEqual({ resource: 'collections/notes', action: 'read' })
  })

  it.each(['books:read', 'system/books:read', 'schema/notes:update'])(
    'refuses %s with 400 naming it and the forms',
    (value) => {
      let thrown: unknown
      try {
        parseCapability(value)
      } catch (err) {
        thrown = err
      }
      expect(thrown).toBeInstanceOf(AppError)
      const err = thrown as AppError
      expect(err.status).toBe(400)
      expect(err.code).toBe('invalid_request')
      expect(err.details).toEqual({ capability: value })
      expect(err.message).toContain(`"${value}"`)
      expect(err.message).toContain(knownResourceForms)
    },
  )

  it('refuses a malformed capability as before', () => {
    expect(() => parseCapability('users.read')).toThrow(AppError)
  })
})
