import { compileErrors, validate } from '@readme/openapi-parser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'

// The served API description is valid OpenAPI 3.1 under a strict validator, and says which operations need
// a credential, so generated clients and the reference page's Authorize button send one.

let server: TestServer
let doc: any
beforeAll(async () => {
  server = await startServer()
  const reply = await server.request('GET', '/api/openapi.json')
  expect(reply.status).toBe(200)
  doc = reply.body
})
afterAll(async () => {
  await server?.stop()
})

const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
function operations(): { key: string; op: Record<string, unknown> }[] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => methods.has(method))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  )
}

describe('GET /api/openapi.json', () => {
  it('is valid OpenAPI 3.1 with zero errors and zero warnings (@readme/openapi-parser, every rule an error)', async () => {
    expect(doc.openapi).toBe('3.1.0')
    const result = await validate(structuredClone(doc))
    // A failure prints the validator's own report: each error with the lines of the document around it.
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true)
    expect(result).toEqual({ valid: true, warnings: [], specification: 'OpenAPI' })
  })

  it('has no key outside the specification on an operation: the permission is x-permission only', () => {
    expect(operations().length).toBeGreaterThan(50)
    for (const { key, op } of operations()) {
      expect(op, key).not.toHaveProperty('permission')
      expect(op['x-permission'], key).toEqual(expect.any(String))
    }
  })

  it('declares the bearer requirement on every operation that needs a credential, and none on public ones', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    const publicOps: string[] = []
    for (const { key, op } of operations()) {
      if (op['x-permission'] === 'public') {
        publicOps.push(key)
        expect(op, key).not.toHaveProperty('security')
      } else {
        expect(op.security, key).toEqual([{ bearer: [] }])
      }
    }
    expect(publicOps).toEqual(expect.arrayContaining(['GET /health', 'POST /api/auth/sign-in/email', 'GET /api/docs']))
    expect(doc.security, 'no document-wide requirement').toBeUndefined()
    const byId = Object.fromEntries(operations().map(({ op }) => [op.operationId, op]))
    expect(byId['records.list']).toMatchObject({
      'x-permission': 'collections/{name}:read',
      security: [{ bearer: [] }],
    })
    expect(byId['auth.getSession']).toMatchObject({ 'x-permission': 'authenticated', security: [{ bearer: [] }] })
  })
})
