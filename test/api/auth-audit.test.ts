import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'

let server: TestServer
let owner: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const settings = await server.request('PATCH', '/api/v1/settings', {
    token: owner.token,
    body: { 'auth.usernameEnabled': true },
  })
  expect(settings.status, settings.text).toBe(200)
})
afterAll(async () => {
  await server?.stop()
})

interface Entry {
  id: string
  at: number
  action: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string | null } | null
  ip: string | null
  details: Record<string, unknown>
}

let counter = 0
const unique = (prefix: string) => `${prefix}${++counter}x${Date.now().toString(36)}`
const signIn = (email: string, password: string) =>
  server.request('POST', '/api/auth/sign-in/email', { body: { email, password } })
async function auditLog(
  query: string,
): Promise<{ data: Entry[]; total: number; page: number; limit: number; hasMore: boolean }> {
  const reply = await server.request('GET', `/api/v1/audit-log?${query}`, { token: owner.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}
const entriesFor = async (action: string, userId: string) =>
  (await auditLog(`action=${action}&limit=100`)).data.filter((e) => e.target?.id === userId)

describe('the audit log of sign-ins', () => {
  it('records a successful sign-in as user.sign_in, with the account, the client address and the method', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const [entry] = await entriesFor('user.sign_in', account.id)
    expect(entry).toEqual({
      id: expect.any(String),
      at: expect.any(Number),
      action: 'user.sign_in',
      actor: { type: 'user', id: account.id },
      target: { type: 'user', id: account.id },
      ip: expect.stringMatching(/127\.0\.0\.1/),
      details: { method: 'email' },
    })
    const now = Math.floor(Date.now() / 1000)
    expect(entry!.at).toBeGreaterThan(now - 600)
    expect(entry!.at).toBeLessThanOrEqual(now + 5)
  })

  it('names the method of a username sign-in', async () => {
    const username = unique('audited')
    const account = await createAccount(server, owner.token, { role: 'viewer', username })
    const reply = await server.request('POST', '/api/auth/sign-in/username', {
      body: { username, password: account.password },
    })
    expect(reply.status).toBe(200)
    const entries = await entriesFor('user.sign_in', account.id)
    expect(entries.map((e) => e.details.method)).toEqual(['username', 'email'])
  })

  it('records a wrong password as user.sign_in_failed against the account, without the password tried', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    const tried = `guess-${unique('pw')}`
    expect((await signIn(account.email, tried)).status).toBe(401)
    const entries = await entriesFor('user.sign_in_failed', account.id)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      action: 'user.sign_in_failed',
      actor: { type: 'user', id: account.id },
      target: { type: 'user', id: account.id },
      ip: expect.stringMatching(/127\.0\.0\.1/),
      details: { method: 'email', reason: 'credentials' },
    })
    const all = await server.request('GET', '/api/v1/audit-log?limit=100', { token: owner.token })
    expect(all.text).not.toContain(tried)
    expect(all.text).not.toContain(account.password)
  })

  it('records an unknown email as an anonymous user.sign_in_failed that names nobody', async () => {
    const email = `${unique('ghost')}@example.com`
    expect((await signIn(email, 'whatever password')).status).toBe(401)
    const [latest] = (await auditLog('action=user.sign_in_failed&limit=1')).data
    expect(latest).toMatchObject({
      action: 'user.sign_in_failed',
      actor: { type: 'anonymous', id: null },
      target: null,
      details: { method: 'email', reason: 'credentials' },
    })
    const all = await server.request('GET', '/api/v1/audit-log?limit=100', { token: owner.token })
    expect(all.text).not.toContain(email)
  })

  it('records a banned account turned away, with the reason', async () => {
    const account = await createAccount(server, owner.token, { role: 'viewer' })
    expect(
      (await server.request('PATCH', `/api/v1/users/${account.id}`, { token: owner.token, body: { banned: true } }))
        .status,
    ).toBe(200)
    expect((await signIn(account.email, account.password)).status).toBe(403)
    const entries = await entriesFor('user.sign_in_failed', account.id)
    expect(entries.map((e) => e.details)).toEqual([{ method: 'email', reason: 'banned' }])
  })

  it('lists newest first', async () => {
    const a = await createAccount(server, owner.token, { role: 'viewer' })
    const b = await createAccount(server, owner.token, { role: 'viewer' })
    expect((await signIn(a.email, 'wrong password')).status).toBe(401)
    expect((await signIn(b.email, 'wrong password')).status).toBe(401)
    expect((await signIn(a.email, a.password)).status).toBe(200)
    const { data } = await auditLog('limit=100')
    const mine = data.filter((e) => [a.id, b.id].includes(e.target?.id ?? '') && e.action.startsWith('user.sign_in'))
    expect(mine.map((e) => [e.action, e.target?.id])).toEqual([
      ['user.sign_in', a.id],
      ['user.sign_in_failed', b.id],
      ['user.sign_in_failed', a.id],
      // createAccount signs each account in once.
      ['user.sign_in', b.id],
      ['user.sign_in', a.id],
    ])
    for (let i = 1; i < data.length; i++) expect(data[i - 1]!.at).toBeGreaterThanOrEqual(data[i]!.at)
  })

  it('pages with page, limit, total and hasMore', async () => {
    for (let i = 0; i < 3; i++)
      expect((await signIn(`${unique('pager')}@example.com`, 'wrong password')).status).toBe(401)
    const full = await auditLog('action=user.sign_in_failed&limit=100')
    expect(full.total).toBeGreaterThanOrEqual(3)
    expect(full.data).toHaveLength(full.total)
    expect(full.data.every((e) => e.action === 'user.sign_in_failed')).toBe(true)

    const first = await auditLog('action=user.sign_in_failed&limit=2&page=1')
    expect(first).toMatchObject({ total: full.total, page: 1, limit: 2, hasMore: true })
    expect(first.data.map((e) => e.id)).toEqual(full.data.slice(0, 2).map((e) => e.id))
    const second = await auditLog('action=user.sign_in_failed&limit=2&page=2')
    expect(second).toMatchObject({ total: full.total, page: 2, limit: 2, hasMore: full.total > 4 })
    expect(second.data.map((e) => e.id)).toEqual(full.data.slice(2, 4).map((e) => e.id))
    const last = Math.ceil(full.total / 2)
    const end = await auditLog(`action=user.sign_in_failed&limit=2&page=${last}`)
    expect(end.hasMore).toBe(false)
    expect(end.data.map((e) => e.id)).toEqual(full.data.slice((last - 1) * 2).map((e) => e.id))
    const beyond = await auditLog(`action=user.sign_in_failed&limit=2&page=${last + 1}`)
    expect(beyond).toMatchObject({ data: [], total: full.total, hasMore: false })
  })

  it('defaults to page 1 of 25 entries', async () => {
    const reply = await auditLog('')
    expect(reply).toMatchObject({ page: 1, limit: 25 })
    expect(reply.data.length).toBeLessThanOrEqual(25)
  })

  it('is refused to a viewer with 403', async () => {
    const viewer = await createAccount(server, owner.token, { role: 'viewer' })
    const reply = await server.request('GET', '/api/v1/audit-log', { token: viewer.token })
    expect(reply.status, reply.text).toBe(403)
    expect(reply.body.error).toBe('forbidden')
    expect(reply.text).not.toContain('sign_in')
  })

  runScenarios(
    () => server,
    [
      {
        name: 'no credential',
        method: 'GET',
        path: '/api/v1/audit-log',
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a limit over 100',
        method: 'GET',
        path: '/api/v1/audit-log?limit=101',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'page 0',
        method: 'GET',
        path: '/api/v1/audit-log?page=0',
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'an action nobody wrote',
        method: 'GET',
        path: '/api/v1/audit-log?action=user.nothing',
        as: () => owner.token,
        status: 200,
        contains: { data: [], total: 0, hasMore: false },
      },
    ],
  )
})
