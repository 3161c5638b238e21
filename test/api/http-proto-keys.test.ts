import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { createCollection, createRecord, expectError, listAll, readRecord, recordsPath } from './records-fixtures.js'

// A JSON body with a `__proto__` key, at any depth, is 400 invalid_request on every JSON route. It used
// to vanish in validation: a record create with {"__proto__": …} answered 201 without the field.

let server: TestServer
let owner: Account
const notes = 'proto_notes'
let noteId: string

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, notes, [
    { name: 'title', type: 'text', required: false },
    { name: 'meta', type: 'json', required: false },
  ])
  noteId = (await createRecord(server, owner.token, notes, { title: 'first' })).id
})
afterAll(async () => {
  await server?.stop()
})

const as = () => owner.token
const refusal = { error: 'invalid_request', details: { key: '__proto__' } }
const proto = (json: string) => ({ rawBody: json, headers: { 'content-type': 'application/json' } })

describe('__proto__ keys in JSON bodies', () => {
  runScenarios(
    () => server,
    [
      {
        name: 'record create, top level',
        as,
        method: 'POST',
        path: recordsPath(notes),
        ...proto('{"title":"x","__proto__":{"admin":true}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'record create, inside a JSON field',
        as,
        method: 'POST',
        path: recordsPath(notes),
        ...proto('{"meta":{"a":[{"__proto__":1}]}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'record create, spelled with \\u escapes',
        as,
        method: 'POST',
        path: recordsPath(notes),
        ...proto('{"\\u005f_proto__":{"admin":true}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'record update, top level',
        as,
        method: 'PATCH',
        path: `${recordsPath(notes)}/first-id`,
        ...proto('{"__proto__":{"title":"y"}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'record update, in an operator',
        as,
        method: 'PATCH',
        path: `${recordsPath(notes)}/first-id`,
        ...proto('{"$set":{"__proto__":1}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'collection create',
        as,
        method: 'POST',
        path: '/api/v1/collections',
        ...proto('{"name":"proto_x","fields":[],"__proto__":{"storageType":"kv"}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'sign-in (a public route)',
        method: 'POST',
        path: '/api/auth/sign-in/email',
        ...proto('{"email":"owner@example.com","password":"x","__proto__":{}}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'bulk delete (a DELETE with a body)',
        as,
        method: 'DELETE',
        path: `${recordsPath(notes)}/bulk`,
        ...proto('{"ids":[],"__proto__":[]}'),
        status: 400,
        contains: refusal,
      },
      {
        name: 'an NDJSON import with one such line refuses the whole body',
        as,
        method: 'POST',
        path: `${recordsPath(notes)}/import-ndjson`,
        rawBody: '{"title":"fine"}\n{"title":"bad","__proto__":{}}\n',
        headers: { 'content-type': 'application/x-ndjson' },
        status: 400,
        contains: refusal,
      },
      // Unknown keys of other names are still each route's own refusal.
      {
        name: 'constructor stays an unknown field',
        as,
        method: 'POST',
        path: recordsPath(notes),
        ...proto('{"constructor":{"x":1}}'),
        status: 400,
        contains: { error: 'invalid_field' },
      },
    ],
  )

  it('nothing was written by the refused requests', async () => {
    expect((await listAll(server, owner.token, notes)).map((r) => r.title)).toEqual(['first'])
    expect(await readRecord(server, owner.token, notes, noteId)).toMatchObject({ title: 'first', meta: null })
  })

  it('the word as a value, or inside a longer key, is fine', async () => {
    const reply = await server.request('POST', recordsPath(notes), {
      token: owner.token,
      ...proto('{"title":"__proto__","meta":{"x__proto__":["__proto__"]}}'),
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body).toMatchObject({ title: '__proto__', meta: { x__proto__: ['__proto__'] } })
  })

  it('a record update on a real record is refused and changes nothing', async () => {
    const before = await readRecord(server, owner.token, notes, noteId)
    expectError(
      await server.request('PATCH', recordsPath(notes, noteId), {
        token: owner.token,
        ...proto('{"title":"changed","__proto__":{}}'),
      }),
      400,
      'invalid_request',
    )
    expect(await readRecord(server, owner.token, notes, noteId)).toEqual(before)
  })
})
