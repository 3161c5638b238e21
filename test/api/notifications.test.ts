import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * In-app notifications (issue 17 item 2, decision 038) over real HTTP, on SQLite and PostgreSQL: a flow's
 * send_notification puts a notification in a project user's inbox and sends it live on that user's
 * WebSocket; the inbox answers its owner only (unread first, paginated, mark read, mark all, delete), and
 * another user's notification is missing to everyone else. A flow may not reach users of other projects.
 */
const BASE = '/api/v1/automate'
const INBOX = '/api/v1/notifications'
let server: TestServer
let owner: Account
let alice: Account
let bob: Account
let strangerId: string

const as =
  (token: string): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body })
const flowOf = (token: string, operations: unknown[]) => activeFlow(as(token), 'notify', operations)

/** Runs the flow as `token` with `body` as $trigger.body and answers the finished run (with stepLogs). */
const run = (token: string, flowId: string, body: Record<string, unknown> = {}) =>
  executeToEnd(as(token), as(owner.token), flowId, body)

const notify = (config: Record<string, unknown>) => [{ key: 'tell', type: 'send_notification', config }]

async function inbox(account: Account, query = ''): Promise<any> {
  const reply = await server.request('GET', `${INBOX}${query}`, { token: account.token })
  expect(reply.status, reply.text).toBe(200)
  return reply.body
}

/** A WebSocket on the caller's notification stream, collecting what arrives; resolves once connected. */
async function liveInbox(token: string) {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}${INBOX}/stream`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const messages: any[] = []
  const waiters = new Set<() => void>()
  const ended = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
  const hello = await new Promise<any>((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () =>
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
            status: res.statusCode,
            body: JSON.parse(text),
          }),
        ),
      )
    })
    socket.once('error', reject)
    socket.once('message', (data) => resolve(JSON.parse(String(data))))
  })
  expect(hello).toEqual({ type: 'stream.connected', stream: 'notifications' })
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)))
    for (const wake of [...waiters]) wake()
  })
  return {
    messages,
    until: (match: (m: any) => boolean) =>
      new Promise<any[]>((resolve) => {
        const test = () => {
          if (messages.some(match)) {
            waiters.delete(test)
            resolve(messages)
          }
        }
        waiters.add(test)
        test()
      }),
    ended,
    close: () => socket.close(),
  }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  alice = await createAccount(server, owner.token, { role: 'editor' })
  bob = await createAccount(server, owner.token, { role: 'editor' })
  // A user of another project: a flow here may not reach them.
  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'elsewhere' } })
  expect(project.status, project.text).toBe(201)
  const stranger = await server.request('POST', '/api/v1/users', {
    token: owner.token,
    headers: { 'x-project-id': project.body.data.id },
    body: { email: 'stranger@example.com', password: 'a good password', name: 'Stranger', role: 'editor' },
  })
  expect(stranger.status, stranger.text).toBe(201)
  strangerId = stranger.body.data.id
})
afterAll(async () => {
  await server?.stop()
})

describe('send_notification in a flow', () => {
  it("puts the notification in the named user's inbox, with the flow and run it came from; nobody else gets it", async () => {
    const flowId = await flowOf(
      owner.token,
      notify({
        title: 'Order {{$trigger.body.id}}',
        message: '{{$trigger.body.who}} ordered',
        type: 'success',
        userId: '{{$trigger.body.to}}',
        link: '/orders/{{$trigger.body.id}}',
      }),
    )
    const done = await run(owner.token, flowId, { id: 'o-1', who: 'Carol', to: alice.id })
    expect(done.status, JSON.stringify(done)).toBe('completed')
    expect(done.stepLogs[0].output).toMatchObject({
      userId: alice.id,
      type: 'success',
      notificationId: expect.any(String),
    })
    const mine = await inbox(alice)
    expect(mine.data).toHaveLength(1)
    expect(mine.data[0]).toMatchObject({
      title: 'Order o-1',
      message: 'Carol ordered',
      type: 'success',
      link: '/orders/o-1',
      read: false,
      readAt: null,
      flowId,
      runId: done.runId,
    })
    expect(mine).toMatchObject({ total: 1, unread: 1, page: 1, limit: 25, hasMore: false })
    expect((await inbox(bob)).data).toEqual([])
  })

  it('without userId, notifies the user the run acts for', async () => {
    const flowId = await flowOf(owner.token, notify({ title: 'Done', message: 'your export is ready' }))
    const done = await run(bob.token, flowId)
    expect(done.status, JSON.stringify(done)).toBe('completed')
    expect((await inbox(bob)).data.map((n: any) => [n.title, n.type])).toEqual([['Done', 'info']])
  })

  it('refuses a user of another project and an unknown id with a typed error, storing nothing', async () => {
    const flowId = await flowOf(owner.token, notify({ title: 'x', message: 'y', userId: '{{$trigger.body.to}}' }))
    for (const to of [strangerId, 'no-such-user']) {
      const done = await run(owner.token, flowId, { to })
      expect(done.status).toBe('failed')
      expect(done.error).toMatchObject({ code: 'notification_recipient_not_found', step: 'tell' })
    }
    // The stranger's inbox, seen from their own project, holds nothing.
    const signIn = await server.request('POST', '/api/auth/sign-in/email', {
      body: { email: 'stranger@example.com', password: 'a good password' },
    })
    expect(signIn.status, signIn.text).toBe(200)
    const theirs = await server.request('GET', INBOX, { token: signIn.body.token })
    expect(theirs.body).toMatchObject({ data: [], total: 0 })
  })

  it('a flow cannot hold a system operation (422 naming the step)', async () => {
    const created = await server.request('POST', `${BASE}/flows`, {
      token: owner.token,
      body: {
        name: 'sneaky',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [{ key: 'purge', type: 'system_archival', config: {} }],
      },
    })
    expect(created.status).toBe(422)
    expect(created.body).toMatchObject({
      error: 'validation_error',
      details: { step: 'purge', path: 'operations[0].type' },
    })
  })
})

describe('the inbox', () => {
  let reader: Account
  let ids: string[]
  beforeAll(async () => {
    reader = await createAccount(server, owner.token, { role: 'viewer' })
    const flowId = await flowOf(owner.token, notify({ title: '{{$trigger.body.n}}', message: 'm', userId: reader.id }))
    ids = []
    for (const n of ['first', 'second', 'third']) {
      const done = await run(owner.token, flowId, { n })
      expect(done.status).toBe('completed')
      ids.push(done.stepLogs[0].output.notificationId)
    }
  })

  it("lists its owner's notifications unread first, then newest first, paginated; mark one read moves it down", async () => {
    expect((await inbox(reader)).data.map((n: any) => n.title)).toEqual(['third', 'second', 'first'])
    const read = await server.request('POST', `${INBOX}/${ids[2]}/read`, { token: reader.token })
    expect(read.status, read.text).toBe(200)
    expect(read.body.data).toMatchObject({ id: ids[2], read: true, readAt: expect.any(String) })
    const all = await inbox(reader)
    expect(all.data.map((n: any) => [n.title, n.read])).toEqual([
      ['second', false],
      ['first', false],
      ['third', true],
    ])
    expect(all).toMatchObject({ total: 3, unread: 2 })
    const page = await inbox(reader, '?limit=2&page=2')
    expect(page).toMatchObject({ total: 3, page: 2, limit: 2, hasMore: false })
    expect(page.data.map((n: any) => n.title)).toEqual(['third'])
    expect((await inbox(reader, '?limit=2')).hasMore).toBe(true)
    expect((await inbox(reader, '?unread=true')).data.map((n: any) => n.title)).toEqual(['second', 'first'])
  })

  it('another user can neither read, mark nor delete them: 404, and nothing changes', async () => {
    const victim = ids[0]!
    expect((await server.request('POST', `${INBOX}/${victim}/read`, { token: bob.token })).body).toMatchObject({
      error: 'not_found',
    })
    expect((await server.request('POST', `${INBOX}/${victim}/read`, { token: bob.token })).status).toBe(404)
    expect((await server.request('DELETE', `${INBOX}/${victim}`, { token: bob.token })).status).toBe(404)
    // Not even an administrator reaches another person's inbox.
    expect((await server.request('DELETE', `${INBOX}/${victim}`, { token: owner.token })).status).toBe(404)
    expect((await server.request('POST', `${INBOX}/read-all`, { token: bob.token })).status).toBe(200)
    expect((await inbox(bob)).data.map((n: any) => n.id)).not.toContain(victim)
    const still = (await inbox(reader)).data.find((n: any) => n.id === victim)
    expect(still).toMatchObject({ read: false })
  })

  it('an API key has no inbox (403); an anonymous caller is 401', async () => {
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'k', capabilities: ['system/automate:read'] },
    })
    expect(key.status, key.text).toBe(201)
    expect((await server.request('GET', INBOX, { token: key.body.raw })).body).toMatchObject({ error: 'forbidden' })
    expect((await server.request('GET', INBOX)).status).toBe(401)
  })

  it('mark all read, then delete one: gone from the inbox', async () => {
    const marked = await server.request('POST', `${INBOX}/read-all`, { token: reader.token })
    expect(marked.status, marked.text).toBe(200)
    expect(marked.body.data).toEqual({ updated: 2 })
    expect((await inbox(reader)).unread).toBe(0)
    const removed = await server.request('DELETE', `${INBOX}/${ids[1]}`, { token: reader.token })
    expect(removed.status, removed.text).toBe(200)
    expect((await inbox(reader)).data.map((n: any) => n.title)).toEqual(['third', 'first'])
    expect((await server.request('DELETE', `${INBOX}/${ids[1]}`, { token: reader.token })).status).toBe(404)
  })
})

describe("live delivery on the recipient's channel", () => {
  it("arrives on the recipient's WebSocket only", async () => {
    const aliceLive = await liveInbox(alice.token)
    const bobLive = await liveInbox(bob.token)
    try {
      const flowId = await flowOf(
        owner.token,
        notify({ title: 'Live {{$trigger.body.to}}', message: 'now', userId: '{{$trigger.body.to}}', type: 'warning' }),
      )
      expect((await run(owner.token, flowId, { to: alice.id })).status).toBe('completed')
      expect((await run(owner.token, flowId, { to: bob.id })).status).toBe('completed')
      await aliceLive.until((m) => m.notification?.title === `Live ${alice.id}`)
      // Bob's own arrives; messages reach a stream in order, so had Alice's reached him it would be here first.
      await bobLive.until((m) => m.notification?.title === `Live ${bob.id}`)
      expect(bobLive.messages).toEqual([
        {
          type: 'notification.create',
          notification: expect.objectContaining({ title: `Live ${bob.id}`, type: 'warning', read: false }),
        },
      ])
      expect(aliceLive.messages.map((m) => m.notification.title)).toEqual([`Live ${alice.id}`])
    } finally {
      aliceLive.close()
      bobLive.close()
    }
  })

  it('signing out closes the stream at the next notification, which it does not carry (4401)', async () => {
    const person = await createAccount(server, owner.token, { role: 'viewer' })
    const live = await liveInbox(person.token)
    expect((await server.request('POST', '/api/auth/sign-out', { token: person.token })).status).toBe(200)
    const flowId = await flowOf(owner.token, notify({ title: 'after sign-out', message: 'm', userId: person.id }))
    expect((await run(owner.token, flowId)).status).toBe('completed')
    expect(await live.ended).toBe(4401)
    expect(live.messages).toEqual([{ type: 'stream.closed', error: 'unauthorized', message: expect.any(String) }])
  })

  it('refuses the stream to an anonymous caller (401) and an API key (403)', async () => {
    await expect(liveInbox('')).rejects.toMatchObject({ status: 401 })
    const key = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'k2', capabilities: ['system/automate:read'] },
    })
    await expect(liveInbox(key.body.raw)).rejects.toMatchObject({ status: 403, body: { error: 'forbidden' } })
  })
})
