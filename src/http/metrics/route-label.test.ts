import { describe, expect, it } from 'vitest'
import { createRouteLabels, methodLabel, templateOf } from './route-label.js'

describe('templateOf', () => {
  it.each([
    ['/health', '/health'],
    ['/api/v1/collections/:name/records', '/api/v1/collections/{name}/records'],
    ['/api/v1/collections/:name/records/:id', '/api/v1/collections/{name}/records/{id}'],
    ['/files/:path{.+}', '/files/{path}'],
    ['/a/:b?', '/a/{b}'],
  ])('%s → %s', (path, template) => {
    expect(templateOf(path)).toBe(template)
  })
})

describe('createRouteLabels', () => {
  // As the app registers them: most specific first, global middleware under `/*`, a route's middleware beside it.
  const label = createRouteLabels([
    { method: 'POST', path: '/*' },
    { method: 'ALL', path: '/*' },
    { method: 'GET', path: '/api/v1/collections/:name/records/export' },
    { method: 'GET', path: '/api/v1/collections/:name/records/:id' },
    { method: 'GET', path: '/api/v1/collections/:name/records/:id' },
    { method: 'POST', path: '/api/v1/collections/:name/records' },
    { method: 'GET', path: '/health' },
  ])

  it.each([
    ['GET', '/api/v1/collections/notes/records/rec_123', '/api/v1/collections/{name}/records/{id}'],
    ['GET', '/api/v1/collections/notes/records/export', '/api/v1/collections/{name}/records/export'],
    ['HEAD', '/api/v1/collections/notes/records/rec_123', '/api/v1/collections/{name}/records/{id}'],
    ['GET', '/api/collections/notes/records/rec_123', '/api/v1/collections/{name}/records/{id}'],
    ['POST', '/api/v1/collections/notes/records', '/api/v1/collections/{name}/records'],
    ['POST', '/health', 'unmatched'],
    ['DELETE', '/api/v1/collections/notes/records/rec_123', 'unmatched'],
    ['GET', '/nowhere/rec_123', 'unmatched'],
    ['OPTIONS', '/health', 'unmatched'],
    [undefined, '/health', '/health'],
  ])('%s %s → %s', (method, path, expected) => {
    expect(label(method, path)).toBe(expected)
  })
})

describe('methodLabel', () => {
  it('keeps the usual methods and folds the rest into OTHER', () => {
    expect(['GET', 'PATCH', 'OPTIONS', 'PROPFIND', 'get', undefined].map(methodLabel)).toEqual([
      'GET',
      'PATCH',
      'OPTIONS',
      'OTHER',
      'OTHER',
      'OTHER',
    ])
  })
})
