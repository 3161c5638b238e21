import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeToken } from '../../src/modules/capability-tokens/token.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

// Capability tokens (core-api § Capability tokens, § Limits; addendum §5): who may mint one for what, the
// token's shape, and that a token is checked at use (the realtime stream) against the subject's rights then.

let server: TestServer
let owner: Account
/** read on docs limited to status=open; nothing else. */
let reader: Account
/** read on every doc, update only on open ones. */
let narrowEditor: Account
/** read and update on every doc. */
let editor: Account
/** no grant on docs. */
let nobody: Account
let openDoc: string
let closedDoc: string

const MINT = '/api/v1/capability-tokens'
const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })
const mint = (token: string | undefined, body: unknown) => call('POST', MINT, token, body)

let seq = 0
async function personWith(grants: unknown[]): Promise<Account> {
  const name = `cap_role_${seq++}`
  const role = await call('POST', '/api/v1/roles', owner.token, { name })
  expect(role.status, role.text).toBe(201)
  const put = await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })
  expect(put.status, put.text).toBe(200)
  return createAccount(server, owner.token, { role: name })
}

async function roleIdOf(account: Account): Promise<string> {
  const roles = await call('GET', '/api/v1/roles', owner.token)
  return (roles.body.data as { id: string; name: string }[]).find((r) => r.name === account.role)!.id
}

async function newDoc(collection: string, body: Record<string, unknown>, token = owner.token): Promise<string> {
  const reply = await call('POST', `/api/v1/collections/${collection}/records`, token, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.id
}

async function minted(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const reply = await mint(token, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

/** Opens the realtime stream of a collection (SSE) and closes it again; the status and error body if refused. */
async function streamWith(collection: string, token: string, query = ''): Promise<{ status: number; body: any }> {
  const res = await fetch(
    `${server.url}/api/v1/collections/${collection}/stream?token=${encodeURIComponent(token)}${query}`,
  )
  if (res.status === 200) {
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    await res.body!.cancel()
    return { status: 200, body: undefined }
  }
  return { status: res.status, body: await res.json() }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  for (const [name, accessControl] of [
    ['docs', { preset: 'team' }],
    ['shared_docs', { preset: 'private', sharing: true }],
  ] as const) {
    const reply = await call('POST', '/api/v1/collections', owner.token, {
      name,
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'status', type: 'text', required: false },
      ],
      accessControl,
    })
    expect(reply.status, reply.text).toBe(201)
  }
  openDoc = await newDoc('docs', { title: 'Open one', status: 'open' })
  closedDoc = await newDoc('docs', { title: 'Closed one', status: 'closed' })
  const open = { status: { _eq: 'open' } }
  reader = await personWith([{ resource: 'collections/docs', action: 'read', item_filter: open }])
  narrowEditor = await personWith([
    { resource: 'collections/docs', action: 'read' },
    { resource: 'collections/docs', action: 'update', item_filter: open },
  ])
  editor = await personWith([
    { resource: 'collections/docs', action: 'read' },
    { resource: 'collections/docs', action: 'update' },
  ])
  nobody = await personWith([{ resource: 'collections/shared_docs', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('POST /api/v1/capability-tokens: refusals', () => {
  const forbidden = (action: string) => ({
    error: 'forbidden',
    message: expect.stringContaining(`collections/docs:${action}`),
    details: { resource: 'collections/docs', action },
  })
  const invalid = { error: 'invalid_request' }
  runScenarios(
    () => server,
    [
      {
        name: 'anonymous: 401, never minted',
        method: 'POST',
        path: MINT,
        body: { collection: 'docs', documentId: 'x' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'an unknown session token: 401',
        method: 'POST',
        path: MINT,
        as: 'not-a-session',
        body: { collection: 'docs', documentId: 'x' },
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'no grant at all: 403 naming read',
        method: 'POST',
        path: MINT,
        as: () => nobody.token,
        body: { collection: 'docs', documentId: 'x' },
        status: 403,
        contains: forbidden('read'),
      },
      {
        name: 'write needs update, which a reader lacks: 403 naming update, nothing downgraded',
        method: 'POST',
        path: MINT,
        as: () => reader.token,
        body: { collection: 'docs', documentId: 'x', capability: 'write' },
        status: 403,
        contains: forbidden('update'),
      },
      {
        name: 'comment needs update too',
        method: 'POST',
        path: MINT,
        as: () => reader.token,
        body: { collection: 'docs', documentId: 'x', capability: 'comment' },
        status: 403,
        contains: forbidden('update'),
      },
      {
        name: 'collection missing',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { documentId: 'x' },
        status: 400,
        contains: invalid,
      },
      {
        name: 'documentId missing',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs' },
        status: 400,
        contains: invalid,
      },
      {
        name: 'unknown capability',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs', documentId: 'x', capability: 'admin' },
        status: 400,
        contains: invalid,
      },
      {
        name: 'an unusable collection name',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'Docs!', documentId: 'x' },
        status: 400,
        contains: { error: 'invalid_request', details: { field: 'collection' } },
      },
      {
        name: 'an unusable document id',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs', documentId: '../x' },
        status: 400,
        contains: { error: 'invalid_request', details: { field: 'documentId' } },
      },
      {
        name: 'a document id of the wrong type',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs', documentId: 7 },
        status: 400,
        contains: invalid,
      },
      {
        name: 'expiresIn not a number',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs', documentId: 'x', expiresIn: 'ten' },
        status: 400,
        contains: invalid,
      },
      {
        name: 'expiresIn not whole',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'docs', documentId: 'x', expiresIn: 45.5 },
        status: 400,
        contains: invalid,
      },
      {
        name: 'a body that is not JSON',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        rawBody: '{"collection":',
        headers: { 'content-type': 'application/json' },
        status: 400,
        contains: invalid,
      },
      {
        name: 'a JSON array',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: [],
        status: 400,
        contains: invalid,
      },
      {
        name: 'a collection that does not exist: 404',
        method: 'POST',
        path: MINT,
        as: () => owner.token,
        body: { collection: 'nothing_here', documentId: 'x' },
        status: 404,
        contains: { error: 'collection_not_found' },
      },
    ],
  )

  it('a record that does not exist and one outside the row scope are the same 404', async () => {
    const missing = await mint(reader.token, { collection: 'docs', documentId: 'no_such_doc' })
    const hidden = await mint(reader.token, { collection: 'docs', documentId: closedDoc })
    expect(missing.status, missing.text).toBe(404)
    expect(hidden.status, hidden.text).toBe(404)
    expect(hidden.body).toEqual(missing.body)
    expect(hidden.body).toEqual({ error: 'record_not_found', message: 'Record not found', details: {} })
    // And a soft-deleted record is as missing.
    const gone = await newDoc('docs', { title: 'Gone', status: 'open' })
    expect((await call('DELETE', `/api/v1/collections/docs/records/${gone}`, owner.token)).status).toBe(200)
    expect((await mint(owner.token, { collection: 'docs', documentId: gone })).body).toEqual(missing.body)
  })

  it('each grant is checked against its own row scope: read reaches the closed doc, update does not', async () => {
    expect(
      (await mint(narrowEditor.token, { collection: 'docs', documentId: closedDoc, capability: 'read' })).status,
    ).toBe(201)
    const comment = await mint(narrowEditor.token, { collection: 'docs', documentId: closedDoc, capability: 'comment' })
    expect(comment.status, comment.text).toBe(404)
    expect(comment.body.error).toBe('record_not_found')
    expect(
      (await mint(narrowEditor.token, { collection: 'docs', documentId: openDoc, capability: 'comment' })).status,
    ).toBe(201)
  })

  it('a service key acts for no person and gets no token; a key bound to a user does, within its capabilities', async () => {
    const service = await call('POST', '/api/auth/api-keys', owner.token, {
      label: 'svc',
      capabilities: ['collections/docs:read'],
      service: true,
    })
    expect(service.status, service.text).toBe(201)
    const refused = await mint(service.body.raw, { collection: 'docs', documentId: openDoc })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error).toBe('forbidden')

    const key = await call('POST', '/api/auth/api-keys', owner.token, {
      label: 'reader key',
      capabilities: ['collections/docs:read'],
    })
    expect(key.status, key.text).toBe(201)
    const data = await minted(key.body.raw, { collection: 'docs', documentId: openDoc })
    expect(data.subject).toBe(owner.id)
    const write = await mint(key.body.raw, { collection: 'docs', documentId: openDoc, capability: 'write' })
    expect(write.status, write.text).toBe(403)
    expect(write.body).toMatchObject(forbidden('update'))
  })
})

describe('POST /api/v1/capability-tokens: the token', () => {
  it('answers 201 { data } with the token object, uncached; defaults read and 300 s', async () => {
    const before = Math.floor(Date.now() / 1000)
    const reply = await mint(reader.token, { collection: 'docs', documentId: openDoc })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.headers.get('cache-control')).toBe('no-store')
    expect(Object.keys(reply.body)).toEqual(['data'])
    const data = reply.body.data
    expect(data).toEqual({
      token: expect.stringMatching(/^sct1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/),
      capability: 'read',
      document: { collection: 'docs', id: openDoc, type: 'record' },
      subject: reader.id,
      issuedAt: expect.any(Number),
      expiresAt: data.issuedAt + 300,
      expiresIn: 300,
      maxExpiresIn: 600,
    })
    expect(data.issuedAt).toBeGreaterThanOrEqual(before)
    expect(data.issuedAt).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
  })

  it.each([
    [1, 30],
    [-5, 30],
    [0, 30],
    [29, 30],
    [30, 30],
    [45, 45],
    [600, 600],
    [601, 600],
    [1_000_000, 600],
  ])('expiresIn %i is granted as %i', async (asked, granted) => {
    const data = await minted(editor.token, {
      collection: 'docs',
      documentId: openDoc,
      capability: 'write',
      expiresIn: asked,
    })
    expect(data.expiresIn).toBe(granted)
    expect(data.expiresAt - data.issuedAt).toBe(granted)
    expect(data.capability).toBe('write')
  })

  it('appears in no log line, whether minted or used (?token= on the stream)', async () => {
    const a = await minted(editor.token, { collection: 'docs', documentId: openDoc, capability: 'comment' })
    const b = await minted(editor.token, { collection: 'docs', documentId: openDoc, capability: 'read' })
    const before = server.logs.length
    expect((await streamWith('docs', a.token)).status).toBe(200)
    // The stream's access-log line is written when the connection has closed.
    while (!server.logs.slice(before).some((line) => line.includes('/api/v1/collections/docs/stream')))
      await new Promise((resolve) => setImmediate(resolve))
    const logs = server.logs.join('\n')
    expect(logs).not.toContain(a.token)
    expect(logs).not.toContain(a.token.split('.')[2])
    expect(logs).not.toContain(b.token.split('.')[2])
  })
})

describe('a token at use (the realtime stream)', () => {
  it('opens the stream of its record', async () => {
    const { token } = await minted(reader.token, { collection: 'docs', documentId: openDoc })
    expect(await streamWith('docs', token)).toEqual({ status: 200, body: undefined })
  })

  it('a tampered or foreign token is 401', async () => {
    const { token } = await minted(reader.token, { collection: 'docs', documentId: openDoc })
    const [prefix, payload, signature] = token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const swapped = Buffer.from(JSON.stringify({ ...claims, id: closedDoc, capability: 'write' })).toString('base64url')
    const foreign = encodeToken('z'.repeat(64), {
      project: claims.project,
      collection: 'docs',
      id: openDoc,
      capability: 'read',
      subject: reader.id,
      issuedAt: claims.iat,
      expiresAt: claims.exp,
    })
    for (const bad of [
      `${prefix}.${swapped}.${signature}`,
      `${prefix}.${payload}.${signature.slice(0, -2)}AA`,
      `${prefix}.${payload}`,
      foreign,
      'sct1.',
    ]) {
      const reply = await streamWith('docs', bad)
      expect(reply.status, bad).toBe(401)
      expect(reply.body).toEqual({ error: 'unauthorized', message: 'Invalid capability token', details: {} })
    }
  })

  it('an expired token is 401 (signed with the server key, so only the expiry is wrong)', async () => {
    const { token } = await minted(reader.token, { collection: 'docs', documentId: openDoc })
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
    const now = Math.floor(Date.now() / 1000)
    const expired = encodeToken(server.app.config.secretKey, {
      project: claims.project,
      collection: 'docs',
      id: openDoc,
      capability: 'read',
      subject: reader.id,
      issuedAt: now - 400,
      expiresAt: now - 100,
    })
    const reply = await streamWith('docs', expired)
    expect(reply.status).toBe(401)
    expect(reply.body).toEqual({ error: 'unauthorized', message: 'The capability token has expired', details: {} })
    // The same claims a little later in time work: the signature was right.
    const fresh = encodeToken(server.app.config.secretKey, {
      ...{ project: claims.project, collection: 'docs', id: openDoc, capability: 'read', subject: reader.id },
      issuedAt: now,
      expiresAt: now + 60,
    })
    expect((await streamWith('docs', fresh)).status).toBe(200)
  })

  it('stays on its collection and its record', async () => {
    const { token } = await minted(editor.token, { collection: 'docs', documentId: openDoc })
    const other = await streamWith('shared_docs', token)
    expect(other.status).toBe(403)
    expect(other.body.error).toBe('forbidden')
    const otherIds = await streamWith('docs', token, `&ids=${closedDoc}`)
    expect(otherIds.status).toBe(403)
    const more = await streamWith('docs', token, `&ids=${openDoc},${closedDoc}`)
    expect(more.status).toBe(403)
    expect((await streamWith('docs', token, `&ids=${openDoc}`)).status).toBe(200)
  })

  it('a lost grant stops it (403), a record that left the row scope stops it (404)', async () => {
    const person = await personWith([
      { resource: 'collections/docs', action: 'read', item_filter: { status: { _eq: 'open' } } },
      { resource: 'collections/docs', action: 'update' },
    ])
    const doc = await newDoc('docs', { title: 'Moving', status: 'open' })
    const { token } = await minted(person.token, { collection: 'docs', documentId: doc, capability: 'write' })
    expect((await streamWith('docs', token)).status).toBe(200)

    expect(
      (await call('PATCH', `/api/v1/collections/docs/records/${doc}`, owner.token, { status: 'closed' })).status,
    ).toBe(200)
    const outside = await streamWith('docs', token)
    expect(outside.status).toBe(404)
    expect(outside.body.error).toBe('record_not_found')
    expect(
      (await call('PATCH', `/api/v1/collections/docs/records/${doc}`, owner.token, { status: 'open' })).status,
    ).toBe(200)
    expect((await streamWith('docs', token)).status).toBe(200)

    // The write token needs update as well as read: removing update is enough.
    const grants = await call('PUT', `/api/v1/roles/${await roleIdOf(person)}/grants`, owner.token, {
      grants: [{ resource: 'collections/docs', action: 'read' }],
    })
    expect(grants.status, grants.text).toBe(200)
    const lost = await streamWith('docs', token)
    expect(lost.status).toBe(403)
    expect(lost.body).toMatchObject({ error: 'forbidden', details: { resource: 'collections/docs', action: 'update' } })
  })

  it('a banned subject stops it (401); lifting the ban brings it back', async () => {
    const person = await personWith([{ resource: 'collections/docs', action: 'read' }])
    const { token } = await minted(person.token, { collection: 'docs', documentId: openDoc })
    expect((await call('PATCH', `/api/v1/users/${person.id}`, owner.token, { banned: true })).status).toBe(200)
    const banned = await streamWith('docs', token)
    expect(banned.status).toBe(401)
    expect(banned.body.error).toBe('unauthorized')
    expect((await call('PATCH', `/api/v1/users/${person.id}`, owner.token, { banned: false })).status).toBe(200)
    expect((await streamWith('docs', token)).status).toBe(200)
  })

  it('a revoked share stops it and stops new tokens (404, as for any record out of reach)', async () => {
    const alice = await personWith(
      ['read', 'create', 'update', 'delete'].map((action) => ({ resource: 'collections/shared_docs', action })),
    )
    // Bob may read shared_docs, which is private: his own records, and what is shared with him.
    const bob = await personWith([{ resource: 'collections/shared_docs', action: 'read' }])
    const doc = await newDoc('shared_docs', { title: 'Private plan' }, alice.token)
    const before = await mint(bob.token, { collection: 'shared_docs', documentId: doc })
    expect(before.status, before.text).toBe(404)

    const share = await call('POST', `/api/v1/collections/shared_docs/records/${doc}/shares`, alice.token, {
      userId: bob.id,
      access: 'edit',
    })
    expect(share.status, share.text).toBe(201)
    const { token } = await minted(bob.token, { collection: 'shared_docs', documentId: doc })
    expect((await streamWith('shared_docs', token)).status).toBe(200)
    // An edit share opens update on that record even without an update grant.
    expect((await mint(bob.token, { collection: 'shared_docs', documentId: doc, capability: 'comment' })).status).toBe(
      201,
    )

    const removed = await call(
      'DELETE',
      `/api/v1/collections/shared_docs/records/${doc}/shares/${share.body.data.id}`,
      alice.token,
    )
    expect(removed.status, removed.text).toBe(200)
    const after = await streamWith('shared_docs', token)
    expect(after.status).toBe(404)
    expect(after.body.error).toBe('record_not_found')
    const again = await mint(bob.token, { collection: 'shared_docs', documentId: doc })
    expect(again.status).toBe(404)
    expect(again.body).toEqual(before.body)
  })
})
