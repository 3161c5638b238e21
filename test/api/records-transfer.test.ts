import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecordEvent } from '../../src/modules/records/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createRecord, expectError, recordsPath } from './records-fixtures.js'

// POST /api/v1/collections/:name/records/:id/transfer (core-api § Record endpoints, addendum §4): who may
// transfer, to whom, what the previous owner keeps, and what a retry answers.

let server: TestServer
let owner: Account
let admin: Account
/** read, create, update, delete on every collection: owns what they create. */
let alice: Account
let bob: Account
/** read and transfer, nothing else. */
let transferrer: Account
/** read, update and write: neither implies transfer. */
let updater: Account
/** manage on `plain` only. */
let manager: Account
/** Someone in another project with an address of their own. */
let stranger: { id: string; email: string }

const DOCS = 'docs' // private, sharing on
const PLAIN = 'plain' // team, sharing off
const SEALED = 'sealed' // private, sharing off

const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, headers, ...(body === undefined ? {} : { body }) })
const transfer = (collection: string, id: string, token: string | undefined, body: unknown): Promise<Reply> =>
  call('POST', `${recordsPath(collection, id)}/transfer`, token, body)

let seq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `transfer_role_${seq++}`
  const role = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  const put = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

/** The record as an administrator sees it (soft-deleted ones too). */
async function stored(collection: string, id: string): Promise<Record<string, any>> {
  const reply = await call('GET', recordsPath(collection, id, { include_deleted: 'true' }), owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

async function sharesOf(collection: string, id: string): Promise<{ userId: string; access: string }[]> {
  const reply = await call('GET', `${recordsPath(collection, id)}/shares`, owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data.map((s: any) => ({ userId: s.userId, access: s.access }))
}

const crud = ['read', 'create', 'update', 'delete'].map((action) => ({ resource: 'collections/*', action }))

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  for (const [name, accessControl] of [
    [DOCS, { preset: 'private', sharing: true }],
    [PLAIN, null],
    [SEALED, { preset: 'private' }],
  ] as const) {
    const reply = await call('POST', '/api/v1/collections', owner.token, {
      name,
      fields: [{ name: 'title', type: 'text', required: true }],
      ...(accessControl ? { accessControl } : {}),
    })
    expect(reply.status, reply.text).toBe(201)
  }
  alice = await personWith(crud)
  bob = await personWith(crud)
  transferrer = await personWith([
    { resource: 'collections/*', action: 'read' },
    { resource: 'collections/*', action: 'transfer' },
  ])
  updater = await personWith([
    { resource: 'collections/*', action: 'read' },
    { resource: 'collections/*', action: 'update' },
    { resource: 'collections/*', action: 'write' },
  ])
  manager = await personWith([{ resource: `collections/${PLAIN}`, action: 'manage' }])

  const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Elsewhere' })
  expect(project.status, project.text).toBe(201)
  const email = 'stranger@example.com'
  const made = await call(
    'POST',
    '/api/v1/users',
    owner.token,
    { email, password: 'a good password', name: 'Stranger', role: 'viewer' },
    { 'X-Project-Id': project.body.data.id },
  )
  expect(made.status, made.text).toBe(201)
  stranger = { id: made.body.data.id, email }
})
afterAll(async () => {
  await server?.stop()
})

describe('the owner transfers', () => {
  it('by userId: owned_by changes, created_by stays, the previous owner keeps an edit share', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'plan' })
    expectError(await call('GET', recordsPath(DOCS, record.id), bob.token), 404, 'record_not_found')

    const reply = await transfer(DOCS, record.id, alice.token, { userId: bob.id })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      success: true,
      changed: true,
      owner: bob.id,
      previousOwner: alice.id,
      previousOwnerKeptAccess: true,
    })

    const now = await stored(DOCS, record.id)
    expect(now).toMatchObject({
      owned_by: bob.id,
      created_by: alice.id,
      updated_by: alice.id,
      _version: record._version + 1,
    })
    expect(await sharesOf(DOCS, record.id)).toEqual([{ userId: alice.id, access: 'edit' }])
    // The new owner reads and writes it; the previous one still edits through the share.
    expect((await call('GET', recordsPath(DOCS, record.id), bob.token)).status).toBe(200)
    const edit = await call('PATCH', recordsPath(DOCS, record.id), alice.token, { title: 'still editing' })
    expect(edit.status, edit.text).toBe(200)
  })

  it('a retry answers changed false and changes nothing, even from the previous owner', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'twice' })
    expect((await transfer(DOCS, record.id, alice.token, { userId: bob.id })).body.changed).toBe(true)
    const version = (await stored(DOCS, record.id))._version
    const seen: RecordEvent[] = []
    const stop = server.app.events.on('record.update', (event) => void seen.push(event))
    try {
      for (const token of [alice.token, bob.token]) {
        const again = await transfer(DOCS, record.id, token, { userEmail: bob.email })
        expect(again.status, again.text).toBe(200)
        expect(again.body).toEqual({
          success: true,
          changed: false,
          owner: bob.id,
          previousOwner: bob.id,
          previousOwnerKeptAccess: false,
        })
      }
    } finally {
      stop()
    }
    expect(seen).toEqual([])
    expect((await stored(DOCS, record.id))._version).toBe(version)
  })

  it('to the person who already owns it (the creator): changed false', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'mine' })
    const reply = await transfer(PLAIN, record.id, alice.token, { userId: alice.id })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      success: true,
      changed: false,
      owner: alice.id,
      previousOwner: alice.id,
      previousOwnerKeptAccess: false,
    })
  })

  it('by email, matched case-insensitively', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'by mail' })
    const reply = await transfer(PLAIN, record.id, alice.token, { userEmail: bob.email.toUpperCase() })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ changed: true, owner: bob.id, previousOwner: alice.id })
    expect((await stored(PLAIN, record.id)).owned_by).toBe(bob.id)
  })

  it('keepAccess false: the previous owner of a private record loses it', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'let go' })
    const reply = await transfer(DOCS, record.id, alice.token, { userId: bob.id, keepAccess: false })
    expect(reply.body).toEqual({
      success: true,
      changed: true,
      owner: bob.id,
      previousOwner: alice.id,
      previousOwnerKeptAccess: false,
    })
    expect(await sharesOf(DOCS, record.id)).toEqual([])
    expectError(await call('GET', recordsPath(DOCS, record.id), alice.token), 404, 'record_not_found')
    // A retry now cannot reach the record: as missing.
    expectError(
      await transfer(DOCS, record.id, alice.token, { userId: bob.id, keepAccess: false }),
      404,
      'record_not_found',
    )
  })

  it('sharing off: nobody keeps access, whatever keepAccess says', async () => {
    const record = await createRecord(server, alice.token, SEALED, { title: 'sealed' })
    const reply = await transfer(SEALED, record.id, alice.token, { userId: bob.id, keepAccess: true })
    expect(reply.body).toEqual({
      success: true,
      changed: true,
      owner: bob.id,
      previousOwner: alice.id,
      previousOwnerKeptAccess: false,
    })
    expectError(await call('GET', recordsPath(SEALED, record.id), alice.token), 404, 'record_not_found')
    expect((await call('GET', recordsPath(SEALED, record.id), bob.token)).status).toBe(200)
  })

  it('a share the new owner held is dropped; the owner now covers it', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'shared first' })
    const share = await call('POST', `${recordsPath(DOCS, record.id)}/shares`, alice.token, {
      userId: bob.id,
      access: 'view',
    })
    expect(share.status, share.text).toBe(201)
    expect((await transfer(DOCS, record.id, alice.token, { userId: bob.id })).body.changed).toBe(true)
    expect(await sharesOf(DOCS, record.id)).toEqual([{ userId: alice.id, access: 'edit' }])
  })

  it('the transfer can go back; the share left to the first owner is now simply an owner again', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'round trip' })
    await transfer(DOCS, record.id, alice.token, { userId: bob.id })
    const back = await transfer(DOCS, record.id, bob.token, { userId: alice.id })
    expect(back.body).toEqual({
      success: true,
      changed: true,
      owner: alice.id,
      previousOwner: bob.id,
      previousOwnerKeptAccess: true,
    })
    expect(await sharesOf(DOCS, record.id)).toEqual([{ userId: bob.id, access: 'edit' }])
    expect((await stored(DOCS, record.id)).owned_by).toBe(alice.id)
  })
})

describe('owned_by, events and audit', () => {
  it('a team collection shows owned_by once a record was transferred; the event carries it before and after', async () => {
    const name = `shows_${Date.now().toString(36)}`
    const made = await call('POST', '/api/v1/collections', owner.token, {
      name,
      fields: [{ name: 'title', type: 'text', required: true }],
    })
    expect(made.status, made.text).toBe(201)
    const record = await createRecord(server, alice.token, name, { title: 'x' })
    expect(record).not.toHaveProperty('owned_by')

    const seen: RecordEvent[] = []
    const stop = server.app.events.on('record.update', (event) => void (event.collection === name && seen.push(event)))
    try {
      expect((await transfer(name, record.id, alice.token, { userId: bob.id })).status).toBe(200)
    } finally {
      stop()
    }
    expect(seen).toHaveLength(1)
    expect(seen[0]!.before).toMatchObject({ id: record.id, owned_by: null, created_by: alice.id, title: 'x' })
    expect(seen[0]!.after).toMatchObject({ id: record.id, owned_by: bob.id, created_by: alice.id, title: 'x' })
    expect(seen[0]!.principal).toEqual({ id: alice.id, kind: 'user', role: expect.any(String) })

    const other = await createRecord(server, alice.token, name, { title: 'y' })
    expect(other).toHaveProperty('owned_by', null)
    expect((await stored(name, record.id)).owned_by).toBe(bob.id)
  })

  it('writes record.transferred to the audit log', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'audited' })
    expect((await transfer(PLAIN, record.id, alice.token, { userId: bob.id })).status).toBe(200)
    const audit = await call('GET', '/api/v1/audit-log?action=record.transferred&limit=100', owner.token)
    expect(audit.status, audit.text).toBe(200)
    const entry = audit.body.data.find((e: any) => e.target?.id === record.id)
    expect(entry).toMatchObject({
      action: 'record.transferred',
      actor: { type: 'user', id: alice.id },
      details: { collection: PLAIN, from: alice.id, to: bob.id },
    })
  })
})

describe('who may transfer', () => {
  it('a reader who is not the owner and holds no transfer grant: 403, nothing changes', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'not yours' })
    for (const who of [bob, updater]) {
      const reply = await transfer(PLAIN, record.id, who.token, { userId: who.id })
      expectError(reply, 403, 'forbidden')
      expect(reply.body.message).toContain('transfer')
    }
    expect((await stored(PLAIN, record.id)).owned_by).toBeNull()
  })

  it('a transfer grant, manage on the collection, or admin access may transfer someone else’s record', async () => {
    for (const who of [transferrer, manager, admin, owner]) {
      const record = await createRecord(server, alice.token, PLAIN, { title: `by ${who.role}` })
      const reply = await transfer(PLAIN, record.id, who.token, { userId: bob.id })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ changed: true, owner: bob.id, previousOwner: alice.id })
      expect(await stored(PLAIN, record.id)).toMatchObject({
        owned_by: bob.id,
        created_by: alice.id,
        updated_by: who.id,
      })
    }
  })

  it('a record the caller cannot read is 404; a grant on another collection gives nothing', async () => {
    const record = await createRecord(server, alice.token, DOCS, { title: 'private' })
    expectError(await transfer(DOCS, record.id, bob.token, { userId: bob.id }), 404, 'record_not_found')
    // manage on plain says nothing about docs.
    expectError(await transfer(DOCS, record.id, manager.token, { userId: bob.id }), 403, 'forbidden')
    expect((await stored(DOCS, record.id)).owned_by).toBeNull()
  })

  it('an anonymous caller is 401', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'anon' })
    expectError(await transfer(PLAIN, record.id, undefined, { userId: bob.id }), 401, 'unauthorized')
  })

  it('missing, soft-deleted and unknown-collection targets are 404', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'gone' })
    expect((await call('DELETE', recordsPath(PLAIN, record.id), alice.token)).status).toBe(200)
    expectError(await transfer(PLAIN, record.id, alice.token, { userId: bob.id }), 404, 'record_not_found')
    expectError(await transfer(PLAIN, 'no_such_record', owner.token, { userId: bob.id }), 404, 'record_not_found')
    expectError(
      await transfer('no_such_collection', 'abc', owner.token, { userId: bob.id }),
      404,
      'collection_not_found',
    )
  })

  it("an API key of the owner needs update on the collection to act on its person's ownership", async () => {
    const readKey = await call('POST', '/api/auth/api-keys', alice.token, {
      label: 'read',
      capabilities: [`collections/${PLAIN}:read`],
    })
    expect(readKey.status, readKey.text).toBe(201)
    const transferKey = await call('POST', '/api/auth/api-keys', alice.token, {
      label: 'write',
      capabilities: [`collections/${PLAIN}:read`, `collections/${PLAIN}:update`],
    })
    expect(transferKey.status, transferKey.text).toBe(201)
    const record = await createRecord(server, alice.token, PLAIN, { title: 'keyed' })
    expectError(await transfer(PLAIN, record.id, readKey.body.raw, { userId: bob.id }), 403, 'forbidden')
    expect((await stored(PLAIN, record.id)).owned_by).toBeNull()
    const reply = await transfer(PLAIN, record.id, transferKey.body.raw, { userId: bob.id })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toMatchObject({ changed: true, owner: bob.id, previousOwner: alice.id })
  })
})

describe('the person', () => {
  it('an unknown id, an unknown address and someone of another project are the same 404; nothing changes', async () => {
    const record = await createRecord(server, alice.token, PLAIN, { title: 'stay' })
    const replies = [
      await transfer(PLAIN, record.id, alice.token, { userId: 'nobody_at_all' }),
      await transfer(PLAIN, record.id, alice.token, { userEmail: 'nobody@example.com' }),
      await transfer(PLAIN, record.id, alice.token, { userId: stranger.id }),
      await transfer(PLAIN, record.id, alice.token, { userEmail: stranger.email }),
    ]
    for (const reply of replies) expectError(reply, 404, 'not_found')
    expect(new Set(replies.map((r) => r.text)).size).toBe(1)
    expect((await stored(PLAIN, record.id)).owned_by).toBeNull()
  })

  const bad: [string, unknown][] = [
    ['neither userId nor userEmail', {}],
    ['both userId and userEmail', { userId: 'x', userEmail: 'x@example.com' }],
    ['an empty userId', { userId: '' }],
    ['an empty userEmail', { userEmail: '' }],
    ['userId not a string', { userId: 7 }],
    ['keepAccess not a boolean', { userId: 'x', keepAccess: 'yes' }],
  ]
  for (const [label, body] of bad) {
    it(`${label} is 400 invalid_request`, async () => {
      const record = await createRecord(server, alice.token, PLAIN, { title: label })
      expectError(await transfer(PLAIN, record.id, alice.token, body), 400, 'invalid_request')
      expect((await stored(PLAIN, record.id)).owned_by).toBeNull()
    })
  }

  it('no previous owner (a record made by a service key): previousOwner null, nobody keeps access', async () => {
    const key = await call('POST', '/api/auth/api-keys', owner.token, {
      label: 'service',
      capabilities: [`collections/${DOCS}:create`],
      service: true,
    })
    expect(key.status, key.text).toBe(201)
    const record = await createRecord(server, key.body.raw, DOCS, { title: 'by the system' })
    expect(record.created_by).toBeNull()
    const reply = await transfer(DOCS, record.id, admin.token, { userId: bob.id })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      success: true,
      changed: true,
      owner: bob.id,
      previousOwner: null,
      previousOwnerKeptAccess: false,
    })
    expect(await sharesOf(DOCS, record.id)).toEqual([])
  })
})
