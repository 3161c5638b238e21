import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, roleId, signUpOwner, type Account } from '../support/identity.js'

// GET /api/v1/roles/:id/preview: a page of a collection as a person holding the role would read it. The
// attack it must not allow: a caller who may read roles but not all the data (an auditor) using a role's
// broader view to read rows or fields they could not read themselves.

let server: TestServer
let owner: Account
let alice: Account
let bob: Account
let auditor: Account
let writerId: string
let emptyId: string

const role = async (name: string, grants: unknown[]): Promise<string> => {
  const made = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name, description: name } })
  expect(made.status, made.text).toBe(201)
  const set = await server.request('PUT', `/api/v1/roles/${made.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(set.status, set.text).toBe(200)
  return made.body.data.id
}
const preview = (token: string, id: string, query: string) =>
  server.request('GET', `/api/v1/roles/${id}/preview?${query}`, { token })

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const made = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'secret', type: 'text', required: false },
        { name: 'author', type: 'text', required: false },
      ],
    },
  })
  expect(made.status, made.text).toBe(201)
  writerId = await role('writer', [
    { resource: 'collections/notes', action: 'read', item_filter: { author: { _eq: '$CURRENT_USER' } } },
  ])
  emptyId = await role('nobody', [])
  await role('auditor', [
    { resource: 'system/roles', action: 'read' },
    {
      resource: 'collections/notes',
      action: 'read',
      item_filter: { author: { _eq: '$CURRENT_USER' } },
      fields: ['title', 'author'],
    },
  ])
  alice = await createAccount(server, owner.token, { role: 'writer' })
  bob = await createAccount(server, owner.token, { role: 'writer' })
  auditor = await createAccount(server, owner.token, { role: 'auditor' })
  for (const [title, author] of [
    ['alice 1', alice.id],
    ['alice 2', alice.id],
    ['bob 1', bob.id],
    ['audited', auditor.id],
  ])
    await server.request('POST', '/api/v1/collections/notes/records', {
      token: owner.token,
      body: { title, author, secret: `s-${title}` },
    })
})
afterAll(async () => {
  await server?.stop()
})

describe('GET /api/v1/roles/:id/preview', () => {
  it('reads the collection as a holder of the role, with $CURRENT_USER the person named', async () => {
    const asAlice = await preview(owner.token, writerId, `collection=notes&as=${alice.id}`)
    expect(asAlice.status, asAlice.text).toBe(200)
    expect(asAlice.body.data.allowed).toBe(true)
    expect(asAlice.body.data.as).toBe(alice.id)
    expect(asAlice.body.data.data.map((r: { title: string }) => r.title).sort()).toEqual(['alice 1', 'alice 2'])
    expect(asAlice.body.data.hidden).toBe(0)
    // By default as the caller: the owner wrote none of them.
    const asOwner = await preview(owner.token, writerId, 'collection=notes')
    expect(asOwner.body.data.as).toBe(owner.id)
    expect(asOwner.body.data.data).toEqual([])
  })

  it('a role with no read grant is not allowed, with the reason', async () => {
    const reply = await preview(owner.token, emptyId, `collection=notes&as=${alice.id}`)
    expect(reply.status).toBe(200)
    expect(reply.body.data).toMatchObject({ allowed: false, data: [], hidden: 0 })
    expect(reply.body.data.reason).toEqual(expect.any(String))
  })

  it('never shows the caller rows or fields it may not read itself (an auditor looking through a role)', async () => {
    // The auditor reads only its own notes, and only title and author.
    const reply = await preview(auditor.token, writerId, `collection=notes&as=${alice.id}`)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.data).toEqual([])
    expect(reply.body.data.hidden).toBe(2)
    expect(reply.text).not.toContain('alice 1')
    // Through a role that reads the auditor's own note, the secret field stays out.
    const own = await preview(auditor.token, writerId, `collection=notes&as=${auditor.id}`)
    expect(own.body.data.data.map((r: { title: string }) => r.title)).toEqual(['audited'])
    expect(own.body.data.data[0].secret).toBeUndefined()
    expect(own.text).not.toContain('s-audited')
  })

  it('needs system/roles:read; an unknown role or a person outside the project is 404', async () => {
    expect((await preview(alice.token, writerId, 'collection=notes')).status).toBe(403)
    expect((await preview(owner.token, '0'.repeat(32), 'collection=notes')).status).toBe(404)
    const stranger = await preview(owner.token, writerId, `collection=notes&as=${'f'.repeat(32)}`)
    expect(stranger.status).toBe(404)
    expect((await preview(owner.token, writerId, '')).status).toBe(400)
  })

  it('a built-in role works too (the viewer role by name)', async () => {
    const viewer = await roleId(server, owner.token, 'viewer')
    const reply = await preview(owner.token, viewer, 'collection=notes')
    expect(reply.status, reply.text).toBe(200)
  })
})
