import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { client, createCollection, createRecord, readRecord, recordsPath } from './records-fixtures.js'

/**
 * Oversized JSON values on every write path (records.md "Limits of JSON values"): a value nested deeper
 * than 64 levels and a field that would hold more than 8 MiB of JSON answer 400 invalid_field in the
 * envelope and write nothing. A JSON update operator with a value nested thousands of levels deep used
 * to overflow the stack while the operand was copied, before any check: 500.
 */

let server: TestServer
let owner: Account
const { post, patch, get } = client(() => server)
const items = 'json_limits'
const MiB = 1024 * 1024

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, items, [
    { name: 'title', type: 'text', required: false },
    { name: 'meta', type: 'json', required: false },
    { name: 'tags', type: 'json', required: false },
  ])
})
afterAll(async () => {
  await server?.stop()
})

const path = (id?: string) => recordsPath(items, id)
/** Sent as raw text: a value nested this deep cannot go through JSON.stringify in the test either. */
const raw = (method: string, to: string, text: string) =>
  server.request(method, to, { token: owner.token, rawBody: text, headers: { 'content-type': 'application/json' } })
const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
const count = async () => (await get(`${path()}?limit=1`, owner.token)).body.total as number

/**
 * 400 invalid_field naming the field; or, for a body nested past 256 levels, the body's own bound
 * (docs/http.md), which refuses it before the records service reads it.
 */
function expectRefused(reply: Reply, field: string): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(400)
  if (reply.body.error === 'invalid_request')
    expect(reply.body).toEqual({
      error: 'invalid_request',
      message: 'Request body nests deeper than 256 levels',
      details: { limit: 256 },
    })
  else expect(reply.body).toMatchObject({ error: 'invalid_field', message: expect.any(String), details: { field } })
  expect(Object.keys(reply.body).sort()).toEqual(['details', 'error', 'message'])
}

describe('PATCH with JSON update operators', () => {
  const deep = 100_000
  const refused: [name: string, field: string, body: string][] = [
    ['$set of an array nested 100,000 deep', 'meta', `{"$set":{"meta":${deepArray(deep)}}}`],
    ['$set of an array nested 5,000 deep', 'meta', `{"$set":{"meta":${deepArray(5_000)}}}`],
    ['$set on a path of an object nested 100,000 deep', 'meta', `{"$set":{"meta.inner":${deepObject(deep)}}}`],
    ['$push of an object nested 100,000 deep', 'tags', `{"$push":{"tags":${deepObject(deep)}}}`],
    [
      '$push of 100,000 objects nested in each other',
      'tags',
      `{"$push":{"tags":${'[{"a":'.repeat(deep)}1${'}]'.repeat(deep)}}}`,
    ],
    ['$pull of an array nested 100,000 deep', 'tags', `{"$pull":{"tags":${deepArray(deep)}}}`],
    ['$set of a value one level too deep', 'meta', `{"$set":{"meta":${deepArray(66)}}}`],
    ['$set of a value 200 levels deep (under the body bound)', 'meta', `{"$set":{"meta":${deepArray(200)}}}`],
    ['an operator next to a plain field', 'meta', `{"title":"changed","$set":{"meta":${deepArray(deep)}}}`],
  ]
  for (const [name, field, body] of refused) {
    it(`${name}: 400 invalid_field, the record unchanged`, async () => {
      const record = await createRecord(server, owner.token, items, { title: 'kept', meta: { a: 1 }, tags: ['x'] })
      expectRefused(await raw('PATCH', path(record.id), body), field)
      expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
    })
  }

  it('a wide value is not oversized: $set of 100,000 elements and $push of 100,000 objects are stored', async () => {
    const record = await createRecord(server, owner.token, items, { title: 'wide' })
    const numbers = Array.from({ length: 100_000 }, (_, i) => i)
    const objects = Array.from({ length: 100_000 }, (_, i) => ({ i }))
    expect((await patch(path(record.id), owner.token, { $set: { meta: numbers } })).status).toBe(200)
    expect((await patch(path(record.id), owner.token, { $push: { tags: objects } })).status).toBe(200)
    const stored = await readRecord(server, owner.token, items, record.id)
    expect(stored.meta).toEqual(numbers)
    expect(stored.tags).toEqual([objects])
  })

  it('$push cannot grow a field past 8 MiB: 400 invalid_field with the limit, the record as it was', async () => {
    const record = await createRecord(server, owner.token, items, { title: 'growing' })
    const chunk = 'x'.repeat(5 * MiB)
    const first = await patch(path(record.id), owner.token, { $push: { tags: chunk } })
    expect(first.status).toBe(200)
    const before = await readRecord(server, owner.token, items, record.id)
    const second = await patch(path(record.id), owner.token, { $push: { tags: chunk } })
    expectRefused(second, 'tags')
    expect(second.body.details.limit).toBe(8 * MiB)
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(before)
  })
})

describe('plain writes of the same values', () => {
  it('PATCH { field: <nested 100,000 deep> }: 400 invalid_field, the record unchanged', async () => {
    const record = await createRecord(server, owner.token, items, { title: 'kept', meta: { a: 1 } })
    expectRefused(await raw('PATCH', path(record.id), `{"meta":${deepArray(100_000)}}`), 'meta')
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })

  it('PATCH { field: <9 MiB of JSON> }: 400 invalid_field (within the body limit, over the field limit)', async () => {
    const record = await createRecord(server, owner.token, items, { title: 'kept' })
    expectRefused(await patch(path(record.id), owner.token, { meta: 'x'.repeat(9 * MiB) }), 'meta')
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })

  it('POST with either: 400 invalid_field, nothing created', async () => {
    const before = await count()
    expectRefused(await raw('POST', path(), `{"meta":${deepArray(100_000)}}`), 'meta')
    expectRefused(await post(path(), owner.token, { meta: 'x'.repeat(9 * MiB) }), 'meta')
    expect(await count()).toBe(before)
  })

  it('a body over MAX_BODY_BYTES is 413 payload_too_large, the record unchanged', async () => {
    const record = await createRecord(server, owner.token, items, { title: 'kept' })
    const reply = await patch(path(record.id), owner.token, { $set: { meta: 'x'.repeat(11 * MiB) } })
    expect(reply.status).toBe(413)
    expect(reply.body).toMatchObject({ error: 'payload_too_large' })
    expect(await readRecord(server, owner.token, items, record.id)).toEqual(record)
  })
})
