import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * The security review of notifications (issue 25, deliver item 5), as attacks over real HTTP: a flow
 * author with a small custom role (and a super_admin acting in another project) aiming send_notification
 * at users of another project, people reading or deleting notifications that are not theirs across
 * projects, the live stream of one project's user carrying another's, and a link that would run script
 * in an app that shows it.
 */
const INBOX = '/api/v1/notifications'
let server: TestServer
let owner: Account
/** system/automate read, create, update, execute: writes and runs flows in the default project. */
let author: Account
/** An editor of the default project. */
let alice: Account
/** A user of another project, signed in there. */
let stranger: Account
let elsewhere: Record<string, string>

const as =
  (token: string, headers: Record<string, string> = {}): Call =>
  (method, path, body) =>
    server.request(method, path, { token, body, headers })
const notify = (config: Record<string, unknown>) => [
  { key: 'tell', type: 'send_notification', config: { title: 'Hi', message: 'there', ...config } },
]
const rowsFor = (userId: string) =>
  server.app.registry.system.db.selectFrom('notifications').selectAll().where('user_id', '=', userId).execute()

/** A WebSocket on the caller's notification stream, collecting what arrives; resolves once connected. */
async function liveInbox(token: string) {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}${INBOX}/stream`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const messages: any[] = []
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.once('message', () => resolve())
  })
  socket.on('message', (data) => messages.push(JSON.parse(String(data))))
  const until = async (match: (m: any) => boolean) => {
    const deadline = Date.now() + 10_000
    while (!messages.some(match)) {
      if (Date.now() > deadline) throw new Error(`not received: ${JSON.stringify(messages)}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  return { messages, until, close: () => socket.close() }
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  author = await accountWithGrants(
    server,
    owner.token,
    ['read', 'create', 'update', 'execute'].map((action) => ({ resource: 'system/automate', action })),
  )
  alice = await createAccount(server, owner.token, { role: 'editor' })
  const project = await server.request('POST', '/api/v1/projects', { token: owner.token, body: { name: 'elsewhere' } })
  expect(project.status, project.text).toBe(201)
  elsewhere = { 'x-project-id': project.body.data.id as string }
  const email = 'stranger@example.com'
  const created = await server.request('POST', '/api/v1/users', {
    token: owner.token,
    headers: elsewhere,
    body: { email, password: 'a good password', name: 'Stranger', role: 'editor' },
  })
  expect(created.status, created.text).toBe(201)
  const signedIn = await server.request('POST', '/api/auth/sign-in/email', {
    body: { email, password: 'a good password' },
  })
  expect(signedIn.status, signedIn.text).toBe(200)
  stranger = {
    id: created.body.data.id,
    email,
    password: 'a good password',
    token: signedIn.body.token,
    role: 'editor',
  }
})
afterAll(async () => {
  await server?.stop()
})

describe('send_notification across projects', () => {
  it('a flow here cannot notify a user of another project, and a flow there cannot notify a user here: refused, nothing stored', async () => {
    const here = await activeFlow(as(author.token), 'reach out', notify({ userId: '{{$trigger.body.to}}' }))
    const refusedHere = await executeToEnd(as(author.token), as(owner.token), here, { to: stranger.id })
    expect(refusedHere.status).toBe('failed')
    expect(refusedHere.error).toMatchObject({ code: 'notification_recipient_not_found', step: 'tell' })

    // A super_admin acting in the other project: neither a user of this one, nor itself (its inbox is here).
    const there = await activeFlow(as(owner.token, elsewhere), 'reach back', notify({ userId: '{{$trigger.body.to}}' }))
    for (const to of [alice.id, owner.id, author.id]) {
      const run = await executeToEnd(as(owner.token, elsewhere), as(owner.token, elsewhere), there, { to })
      expect(run.status, to).toBe('failed')
      expect(run.error, to).toMatchObject({ code: 'notification_recipient_not_found', step: 'tell' })
    }
    const itself = await activeFlow(as(owner.token, elsewhere), 'to the runner', notify({}))
    expect((await executeToEnd(as(owner.token, elsewhere), as(owner.token, elsewhere), itself)).error).toMatchObject({
      code: 'notification_recipient_not_found',
    })

    for (const user of [stranger, alice, owner, author]) expect(await rowsFor(user.id), user.email).toEqual([])
    // The same flow there reaches its own project's user.
    const ok = await executeToEnd(as(owner.token, elsewhere), as(owner.token, elsewhere), there, { to: stranger.id })
    expect(ok.status, JSON.stringify(ok.error)).toBe('completed')
    expect((await rowsFor(stranger.id)).map((r) => r.project_id)).toEqual([elsewhere['x-project-id']])
  })
})

describe('the inbox across projects', () => {
  it('a user of another project, or a super_admin acting there, can neither read, mark nor delete a notification here', async () => {
    const flow = await activeFlow(
      as(author.token),
      'for alice',
      notify({ userId: alice.id, title: 'private to alice' }),
    )
    const done = await executeToEnd(as(author.token), as(owner.token), flow)
    expect(done.status, JSON.stringify(done.error)).toBe('completed')
    const id = done.stepLogs[0].output.notificationId as string
    for (const call of [as(stranger.token), as(owner.token, elsewhere), as(owner.token), as(author.token)]) {
      expect((await call('POST', `${INBOX}/${id}/read`)).status).toBe(404)
      expect((await call('DELETE', `${INBOX}/${id}`)).status).toBe(404)
      const listed = await call('GET', `${INBOX}?limit=100`)
      expect(listed.status, listed.text).toBe(200)
      expect(listed.text).not.toContain('private to alice')
      expect((await call('POST', `${INBOX}/read-all`)).status).toBe(200)
    }
    const hers = await as(alice.token)('GET', INBOX)
    expect(hers.body.data.find((n: any) => n.id === id)).toMatchObject({ title: 'private to alice', read: false })
  })
})

describe('live streams across projects', () => {
  it("a stream carries its own person's notifications only: not another project's, not a refused attempt", async () => {
    const aliceLive = await liveInbox(alice.token)
    const strangerLive = await liveInbox(stranger.token)
    const ownerThere = await liveInbox(owner.token)
    try {
      const here = await activeFlow(
        as(author.token),
        'live here',
        notify({ userId: '{{$trigger.body.to}}', title: 'here {{$trigger.body.to}}' }),
      )
      const there = await activeFlow(
        as(owner.token, elsewhere),
        'live there',
        notify({ userId: '{{$trigger.body.to}}', title: 'there {{$trigger.body.to}}' }),
      )
      // Refused attempts first; streams deliver in order, so had they reached anyone, they would be first.
      expect((await executeToEnd(as(author.token), as(owner.token), here, { to: stranger.id })).status).toBe('failed')
      expect(
        (await executeToEnd(as(owner.token, elsewhere), as(owner.token, elsewhere), there, { to: alice.id })).status,
      ).toBe('failed')
      expect((await executeToEnd(as(author.token), as(owner.token), here, { to: alice.id })).status).toBe('completed')
      expect(
        (await executeToEnd(as(owner.token, elsewhere), as(owner.token, elsewhere), there, { to: stranger.id })).status,
      ).toBe('completed')
      await aliceLive.until((m) => m.notification?.title === `here ${alice.id}`)
      await strangerLive.until((m) => m.notification?.title === `there ${stranger.id}`)
      expect(aliceLive.messages.map((m) => m.notification?.title)).toEqual([`here ${alice.id}`])
      expect(strangerLive.messages.map((m) => m.notification?.title)).toEqual([`there ${stranger.id}`])
      // The super_admin who ran the other project's flow received nothing of it.
      expect(ownerThere.messages).toEqual([])
    } finally {
      aliceLive.close()
      strangerLive.close()
      ownerThere.close()
    }
  })
})

describe('links', () => {
  it('a link from the trigger that would run script where an app shows it is refused, and nothing is stored', async () => {
    const flow = await activeFlow(
      as(author.token),
      'linked',
      notify({ userId: alice.id, link: '{{$trigger.body.link}}' }),
    )
    const before = (await rowsFor(alice.id)).length
    const scripts = [
      'javascript:alert(document.cookie)',
      'JavaScript:alert(1)',
      '  javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      '\u0001javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
    ]
    for (const link of scripts) {
      const run = await executeToEnd(as(author.token), as(owner.token), flow, { link })
      expect(run.status, JSON.stringify(link)).toBe('failed')
      expect(run.error, JSON.stringify(link)).toMatchObject({
        code: 'validation_error',
        step: 'tell',
        message: expect.stringContaining('link'),
      })
    }
    expect(await rowsFor(alice.id)).toHaveLength(before)
    for (const link of [
      '/orders/o-1',
      'orders/o-1?next=javascript:alert(1)',
      'https://shop.example/o/1',
      'http://shop.example/o/1',
      'mailto:ops@example.test',
      '#top',
    ]) {
      const run = await executeToEnd(as(author.token), as(owner.token), flow, { link })
      expect(run.status, `${link}: ${JSON.stringify(run.error)}`).toBe('completed')
    }
    const links = (await as(alice.token)('GET', `${INBOX}?limit=100`)).body.data.map((n: any) => n.link)
    expect(links).toEqual(
      expect.arrayContaining(['/orders/o-1', 'https://shop.example/o/1', 'mailto:ops@example.test']),
    )
  })

  it('a NUL from the trigger is a clear validation error on every database, not a database failure', async () => {
    const flow = await activeFlow(
      as(author.token),
      'nul',
      notify({
        userId: alice.id,
        title: 'T{{$trigger.body.t}}',
        message: 'M{{$trigger.body.m}}',
        link: '/x{{$trigger.body.l}}',
      }),
    )
    const before = (await rowsFor(alice.id)).length
    for (const body of [{ t: 'a\u0000b' }, { m: '\u0000' }, { l: '\u0000' }]) {
      const run = await executeToEnd(as(author.token), as(owner.token), flow, body)
      expect(run.status, JSON.stringify(body)).toBe('failed')
      expect(run.error, JSON.stringify(body)).toMatchObject({
        code: 'validation_error',
        statusCode: 422,
        message: expect.stringContaining('U+0000'),
      })
    }
    expect(await rowsFor(alice.id)).toHaveLength(before)
  })
})
