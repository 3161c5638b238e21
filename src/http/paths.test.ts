import { describe, expect, it } from 'vitest'
import { isDeprecatedAlias, routedPath } from './paths.js'

describe('deprecated aliases', () => {
  it.each([
    ['/api/collections', true, '/api/v1/collections'],
    ['/api/storage-connections/x', true, '/api/v1/storage-connections/x'],
    ['/api/automate/flows', true, '/api/v1/automate/flows'],
    ['/api/v1/collections', false, '/api/v1/collections'],
    ['/api/auth/sign-in/email', false, '/api/auth/sign-in/email'],
    ['/api/openapi.json', false, '/api/openapi.json'],
    ['/api/docs', false, '/api/docs'],
    ['/api/docs/assets/init.js', false, '/api/docs/assets/init.js'],
    ['/health', false, '/health'],
    ['/apis/x', false, '/apis/x'],
  ])('%s → alias %s, routed as %s', (path, alias, routed) => {
    expect(isDeprecatedAlias(path)).toBe(alias)
    expect(routedPath(new Request(`http://h${path}?q=1`))).toBe(routed)
  })
})
