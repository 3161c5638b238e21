import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { runScenarios, type Scenario } from '../support/scenarios.js'
import { createCollection, createRecord, recordsPath } from './records-fixtures.js'

// Integer query parameters take decimal digits only. z.coerce.number read '' as 0 and took hex, binary
// and exponents: ?limit=0x10 listed 16, ?page=0b10 page 2, ?limit=1e1 10.

let server: TestServer
let owner: Account
const notes = 'int_notes'
const scan = `/api/v1/collections/${notes}/fields/meta/scan`

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, notes, [
    { name: 'title', type: 'text', required: false },
    { name: 'meta', type: 'json', required: false, structure: { enforcement: 'warn', shape: { type: 'string' } } },
  ])
  for (let i = 0; i < 20; i++) await createRecord(server, owner.token, notes, { title: `n${i}` })
})
afterAll(async () => {
  await server?.stop()
})

const as = () => owner.token
/** 400 invalid_request whose first issue names the parameter. */
const refused = (name: string, path: string, parameter: string): Scenario => ({
  name,
  as,
  method: 'GET',
  path,
  status: 400,
  contains: { error: 'invalid_request', details: { issues: [{ location: `query.${parameter}` }] } },
})

describe('integer query parameters', () => {
  const records = recordsPath(notes)
  runScenarios(
    () => server,
    [
      refused('a hexadecimal limit', `${records}?limit=0x10`, 'limit'),
      refused('a binary page', `${records}?page=0b10`, 'page'),
      refused('an octal page', `${records}?page=0o2`, 'page'),
      refused('an exponent limit', `${records}?limit=1e1`, 'limit'),
      refused('an empty limit (was 0, then "too small")', `${records}?limit=`, 'limit'),
      refused('an empty page (was 0)', `${records}?page=`, 'page'),
      refused('a fractional limit', `${records}?limit=10.0`, 'limit'),
      refused('a signed limit', `${records}?limit=%2B10`, 'limit'),
      refused('a negative page', `${records}?page=-1`, 'page'),
      refused('a limit with blanks', `${records}?limit=%2010`, 'limit'),
      refused('a limit of 16 digits', `${records}?limit=0000000000000010`, 'limit'),
      refused('a limit over 100, as before', `${records}?limit=101`, 'limit'),
      refused('a repeated limit', `${records}?limit=1&limit=2`, 'limit'),
      {
        name: 'decimal digits',
        as,
        method: 'GET',
        path: `${records}?limit=16&page=1`,
        status: 200,
        contains: { limit: 16, page: 1, total: 20 },
      },
      {
        name: 'leading zeros are still decimal',
        as,
        method: 'GET',
        path: `${records}?limit=010&page=02`,
        status: 200,
        contains: { limit: 10, page: 2 },
      },
      { name: 'absent: the defaults', as, method: 'GET', path: records, status: 200, contains: { limit: 25, page: 1 } },
      refused('users: a hexadecimal limit', '/api/v1/users?limit=0x10', 'limit'),
      refused('users: an empty page', '/api/v1/users?page=', 'page'),
      {
        name: 'users: decimal digits',
        as,
        method: 'GET',
        path: '/api/v1/users?limit=5&page=1',
        status: 200,
        contains: { limit: 5, page: 1 },
      },
      refused('audit log: an exponent limit', '/api/v1/audit-log?limit=1e1', 'limit'),
      refused('audit log: a binary page', '/api/v1/audit-log?page=0b1', 'page'),
      {
        name: 'audit log: decimal digits',
        as,
        method: 'GET',
        path: '/api/v1/audit-log?limit=5',
        status: 200,
        contains: { limit: 5 },
      },
      refused('files: a binary page', '/api/v1/files?page=0b10', 'page'),
      refused('files: an empty limit', '/api/v1/files?limit=', 'limit'),
      {
        name: 'files: decimal digits',
        as,
        method: 'GET',
        path: '/api/v1/files?page=1&limit=7',
        status: 200,
        contains: { page: 1, limit: 7 },
      },
      refused('structure scan: a hexadecimal limit', `${scan}?limit=0x10`, 'limit'),
      refused('structure scan: an empty limit', `${scan}?limit=`, 'limit'),
      { name: 'structure scan: decimal digits', as, method: 'GET', path: `${scan}?limit=10`, status: 200 },
    ],
  )

  it('the hexadecimal limit no longer lists 16 records', async () => {
    const hex = await server.request('GET', `${recordsPath(notes)}?limit=0x10`, { token: owner.token })
    expect(hex.status).toBe(400)
    expect(hex.body.message).toMatch(/^query\.limit: /)
  })

  it('OpenAPI shows them as integers with their bounds and defaults', async () => {
    const doc = (await server.request('GET', '/api/openapi.json')).body
    const parameters = doc.paths['/api/v1/collections/{name}/records'].get.parameters as {
      name: string
      schema: unknown
    }[]
    expect(parameters.find((p) => p.name === 'limit')!.schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 25,
    })
    expect(parameters.find((p) => p.name === 'page')!.schema).toEqual({ type: 'integer', minimum: 1, default: 1 })
    const update = doc.paths['/api/v1/collections/{name}/records/{id}'].patch.parameters as {
      name: string
      schema: unknown
    }[]
    expect(update.find((p) => p.name === 'version')!.schema).toEqual({ type: 'integer', minimum: 0 })
  })
})
