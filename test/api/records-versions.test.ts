import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, expectError, readRecord, recordsPath } from './records-fixtures.js'

// The three version channels of an update (If-Match, ?version, body _version): every one given is
// honoured; disagreeing channels are refused before anything is written.

let server: TestServer
let owner: Account
const { patch } = client(() => server)
const notes = 'versioned_notes'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, notes, [{ name: 'count', type: 'integer', required: false }])
})
afterAll(async () => {
  await server?.stop()
})

/** A record at version 3. */
async function atVersion3(): Promise<Record<string, any>> {
  const record = await createRecord(server, owner.token, notes, { count: 0 })
  for (const count of [1, 2])
    expect((await patch(recordsPath(notes, record.id), owner.token, { count })).status).toBe(200)
  const current = await readRecord(server, owner.token, notes, record.id)
  expect(current._version).toBe(3)
  return current
}

interface Row {
  name: string
  ifMatch?: string
  query?: string
  bodyVersion?: unknown
  status: number
  error?: string
}

const rows: Row[] = [
  // Disagreeing channels: 400, whichever of them holds the current version.
  {
    name: '?version=1 with If-Match at the current version (the audit case)',
    query: '1',
    ifMatch: '3',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'If-Match stale, ?version current', ifMatch: '1', query: '3', status: 400, error: 'invalid_request' },
  { name: 'If-Match current, _version stale', ifMatch: '3', bodyVersion: 1, status: 400, error: 'invalid_request' },
  { name: '?version current, _version stale', query: '3', bodyVersion: 2, status: 400, error: 'invalid_request' },
  { name: '?version stale, _version current', query: '2', bodyVersion: 3, status: 400, error: 'invalid_request' },
  {
    name: 'all three, one of them different',
    ifMatch: '"3"',
    query: '3',
    bodyVersion: 4,
    status: 400,
    error: 'invalid_request',
  },
  // Agreeing channels: one check; 412 when If-Match is among them, else 409.
  { name: 'If-Match and ?version agree on the current version', ifMatch: '3', query: '3', status: 200 },
  {
    name: 'all three agree on the current version (If-Match quoted)',
    ifMatch: 'W/"3"',
    query: '3',
    bodyVersion: 3,
    status: 200,
  },
  { name: '?version and _version agree on the current version', query: '3', bodyVersion: 3, status: 200 },
  {
    name: 'If-Match and ?version agree on a stale version',
    ifMatch: '2',
    query: '2',
    status: 412,
    error: 'precondition_failed',
  },
  {
    name: 'If-Match and _version agree on a stale version',
    ifMatch: '2',
    bodyVersion: 2,
    status: 412,
    error: 'precondition_failed',
  },
  {
    name: 'all three agree on a stale version',
    ifMatch: '1',
    query: '1',
    bodyVersion: 1,
    status: 412,
    error: 'precondition_failed',
  },
  {
    name: '?version and _version agree on a stale version',
    query: '2',
    bodyVersion: 2,
    status: 409,
    error: 'conflict',
  },
  // A single channel, as before.
  { name: 'If-Match alone, stale', ifMatch: '2', status: 412, error: 'precondition_failed' },
  { name: '?version alone, stale', query: '2', status: 409, error: 'conflict' },
  { name: '_version alone, stale', bodyVersion: 2, status: 409, error: 'conflict' },
  { name: 'null _version is no version: ?version alone decides', query: '3', bodyVersion: null, status: 200 },
  // ?version is a decimal whole number; anything else is 400 before any check.
  { name: 'an empty ?version (was read as 0: 409)', query: '', status: 400, error: 'invalid_request' },
  {
    name: 'a hexadecimal ?version (0x3 matched version 3 and committed)',
    query: '0x3',
    status: 400,
    error: 'invalid_request',
  },
  { name: 'a binary ?version', query: '0b11', status: 400, error: 'invalid_request' },
  { name: 'an exponent ?version', query: '3e0', status: 400, error: 'invalid_request' },
  { name: 'a fractional ?version', query: '3.0', status: 400, error: 'invalid_request' },
  { name: 'a negative ?version', query: '-3', status: 400, error: 'invalid_request' },
  { name: 'a ?version with blanks', query: ' 3', status: 400, error: 'invalid_request' },
  { name: 'a leading-zero ?version is still decimal', query: '003', status: 200 },
]

describe('version channels of PATCH /records/:id', () => {
  for (const row of rows) {
    it(`${row.name}: ${row.status}`, async () => {
      const record = await atVersion3()
      const base = recordsPath(notes, record.id)
      const path = row.query === undefined ? base : `${base}?version=${encodeURIComponent(row.query)}`
      const body: Record<string, unknown> = {
        count: 99,
        ...(row.bodyVersion === undefined ? {} : { _version: row.bodyVersion }),
      }
      const reply = await patch(path, owner.token, body, row.ifMatch === undefined ? {} : { 'If-Match': row.ifMatch })
      const stored = await readRecord(server, owner.token, notes, record.id)
      if (row.status === 200) {
        expect(reply.status, reply.text).toBe(200)
        expect(stored).toMatchObject({ count: 99, _version: 4 })
        return
      }
      expectError(reply, row.status, row.error!)
      // A refused update writes nothing.
      expect(stored).toEqual(record)
    })
  }

  it('a disagreement names the channels and the versions each sent', async () => {
    const record = await atVersion3()
    const reply = await patch(
      `${recordsPath(notes, record.id)}?version=1`,
      owner.token,
      { count: 5, _version: 3 },
      { 'If-Match': '3' },
    )
    expectError(reply, 400, 'invalid_request')
    expect(reply.body.details).toEqual({ versions: { 'If-Match': 3, version: 1, _version: 3 } })
  })

  it('an invalid ?version names the parameter', async () => {
    const record = await atVersion3()
    const reply = await patch(`${recordsPath(notes, record.id)}?version=0x3`, owner.token, { count: 5 })
    expectError(reply, 400, 'invalid_request')
    expect(reply.body.details.issues[0].location).toBe('query.version')
  })
})
