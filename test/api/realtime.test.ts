import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createManualClock } from '../../src/lib/clock-manual.js'
import type { RealtimeOptions } from '../../src/modules/realtime/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { startSibling } from '../support/sibling.js'

// Realtime streams (addendum §5): GET /api/v1/collections/:name/stream as Server-Sent Events and as WebSocket.
// Every check is on exact event lists: a stream's last expected event is a write every subscriber under test
// sees (a sentinel); events reach a stream in write order, so once it arrives every earlier one has too.

type Message = {
  type: string
  collection?: string
  record?: Record<string, any>
  at?: number
  error?: string
  message?: string
}

/** One open stream, SSE or WebSocket, collecting what arrives. */
interface Subscriber {
  readonly messages: Message[]
  /** SSE comments (`connected`, `heartbeat`) and WebSocket pings, in order. */
  readonly signals: string[]
  /** Resolves with every message so far once one matches. */
  until(match: (m: Message) => boolean): Promise<Message[]>
  /** Resolves once a signal matches. */
  untilSignal(signal: string): Promise<void>
  /** Resolves when the server ended the stream: `clean` for SSE's end of body, the close code for WebSocket. */
  readonly ended: Promise<{ clean?: boolean; code?: number }>
  close(): void
}

function collector() {
  const messages: Message[] = []
  const signals: string[] = []
  const waiters = new Set<() => void>()
  let endedWith: { clean?: boolean; code?: number } | null = null
  const wake = () => {
    for (const waiter of [...waiters]) waiter()
  }
  const waitFor = <T>(check: () => T | undefined, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const test = () => {
        const found = check()
        if (found !== undefined) {
          waiters.delete(test)
          resolve(found)
        } else if (endedWith) {
          waiters.delete(test)
          reject(new Error(`stream ended before ${what}; got ${JSON.stringify(messages)}`))
        }
      }
      waiters.add(test)
      test()
    })
  return {
    messages,
    signals,
    push(message: Message) {
      messages.push(message)
      wake()
    },
    signal(signal: string) {
      signals.push(signal)
      wake()
    },
    end(how: { clean?: boolean; code?: number }) {
      endedWith ??= how
      wake()
    },
    until: (match: (m: Message) => boolean) =>
      waitFor(() => (messages.some(match) ? [...messages] : undefined), 'the awaited message'),
    untilSignal: (signal: string) =>
      waitFor(() => (signals.includes(signal) ? true : undefined), signal).then(() => {}),
    endedWith: () => endedWith,
  }
}

/** An SSE subscriber over fetch; resolves once the server said `: connected`. Refusals reject with the reply. */
async function sse(
  base: string,
  path: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Subscriber> {
  const controller = new AbortController()
  const res = await fetch(`${base}${path}`, {
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    signal: controller.signal,
  })
  if (res.status !== 200)
    throw Object.assign(new Error(`stream refused: ${res.status}`), { status: res.status, body: await res.json() })
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const c = collector()
  let resolveEnded!: (v: { clean?: boolean }) => void
  const ended = new Promise<{ clean?: boolean }>((r) => (resolveEnded = r))
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let first = true
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        for (let cut = buffer.indexOf('\n\n'); cut !== -1; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          if (first) {
            // The stream opens with a reconnection delay and a comment, before any event.
            expect(block).toBe('retry: 3000\n: connected')
            first = false
            c.signal('connected')
            continue
          }
          const lines = block.split('\n')
          if (lines.length === 1 && lines[0]!.startsWith(': ')) {
            c.signal(lines[0]!.slice(2))
            continue
          }
          const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2)
          const message = JSON.parse(field('data')!) as Message
          expect(field('event')).toBe(message.type)
          if (message.type !== 'stream.closed') expect(field('id')).toMatch(/^[0-9a-f]{32}$/)
          c.push(message)
        }
      }
      c.end({ clean: true })
      resolveEnded({ clean: true })
    } catch {
      c.end({ clean: false })
      resolveEnded({ clean: false })
    }
  })()
  await c.untilSignal('connected')
  return {
    messages: c.messages,
    signals: c.signals,
    until: c.until,
    untilSignal: c.untilSignal,
    ended,
    close: () => controller.abort(),
  }
}

/** A WebSocket subscriber; resolves once the server sent `stream.connected`. Refusals reject with status and body. */
async function ws(base: string, path: string, token?: string): Promise<Subscriber & { socket: WebSocket }> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  })
  const c = collector()
  const ended = new Promise<{ code: number }>((resolve) => socket.on('close', (code) => resolve({ code })))
  void ended.then((how) => c.end(how))
  socket.on('ping', () => c.signal('ping'))
  const hello = await new Promise<Message>((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () =>
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
            status: res.statusCode,
            body: JSON.parse(text),
            headers: res.headers,
          }),
        ),
      )
    })
    socket.once('error', reject)
    socket.once('message', (data) => resolve(JSON.parse(String(data)) as Message))
  })
  expect(hello).toEqual({ type: 'stream.connected', collection: expect.any(String) })
  socket.on('message', (data) => c.push(JSON.parse(String(data)) as Message))
  return {
    messages: c.messages,
    signals: c.signals,
    until: c.until,
    untilSignal: c.untilSignal,
    ended,
    close: () => socket.close(),
    socket,
  }
}

async function refusal(
  attempt: Promise<unknown>,
): Promise<{ status: number; body: any; headers?: Record<string, string> }> {
  try {
    await attempt
  } catch (err) {
    const { status, body, headers } = err as { status: number; body: any; headers?: Record<string, string> }
    if (typeof status === 'number') return { status, body, headers }
    throw err
  }
  throw new Error('the stream was accepted')
}

const SYSTEM = ['id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'deleted_at', '_version']
const pick = (record: Record<string, any>, fields: string[]) =>
  Object.fromEntries(fields.filter((f) => f in record).map((f) => [f, record[f]]))
const event = (type: string, record: Record<string, any>, collection = 'tasks') => ({
  type,
  collection,
  record,
  at: expect.any(Number),
})
const isRecord = (type: string, id: string) => (m: Message) => m.type === type && m.record?.id === id

let server: TestServer
let owner: Account
let admin: Account
/** Reads tasks whose status is open, and only title and status. */
let limited: Account

const call = (
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

let seq = 0
async function personWith(
  grants: unknown[],
  on: TestServer = server,
  by: Account = owner,
): Promise<Account & { roleId: string }> {
  const name = `rt_role_${seq++}`
  const role = await on.request('POST', '/api/v1/roles', { token: by.token, body: { name } })
  expect(role.status, role.text).toBe(201)
  const put = await on.request('PUT', `/api/v1/roles/${role.body.data.id}/grants`, {
    token: by.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
  return { ...(await createAccount(on, by.token, { role: name })), roleId: role.body.data.id }
}

async function write(
  method: 'POST' | 'PATCH' | 'DELETE',
  collection: string,
  id: string | null,
  body?: unknown,
  on: TestServer = server,
  token = owner.token,
): Promise<Record<string, any>> {
  const path = `/api/v1/collections/${collection}/records${id ? `/${id}` : ''}`
  const reply = await on.request(method, path, { token, body })
  expect(reply.status, reply.text).toBe(method === 'POST' ? 201 : 200)
  return reply.body
}

const tasksFields = [
  { name: 'title', type: 'text', required: true },
  { name: 'status', type: 'text', required: false },
  { name: 'secret', type: 'text', required: false },
  { name: 'rank', type: 'integer', required: false },
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  for (const [name, fields, accessControl] of [
    ['tasks', tasksFields, { preset: 'team' }],
    ['board', [{ name: 'title', type: 'text', required: true }], { preset: 'public' }],
  ] as const) {
    const reply = await call('POST', '/api/v1/collections', owner.token, { name, fields, accessControl })
    expect(reply.status, reply.text).toBe(201)
  }
  limited = await personWith([
    {
      resource: 'collections/tasks',
      action: 'read',
      item_filter: { status: { _eq: 'open' } },
      fields: ['title', 'status'],
    },
  ])
})
afterAll(async () => {
  await server?.stop()
})

describe('what each subscriber receives', () => {
  it('a limited role (row filter, field allowlist) over SSE and an admin over WebSocket each see exactly what they may', async () => {
    const narrow = await sse(server.url, '/api/v1/collections/tasks/stream', limited.token)
    const wide = await ws(server.url, '/api/v1/collections/tasks/stream', admin.token)

    const a0 = await write('POST', 'tasks', null, { title: 'A', status: 'open', secret: 'secret-a', rank: 1 })
    const b0 = await write('POST', 'tasks', null, { title: 'B', status: 'closed', secret: 'secret-b', rank: 2 })
    const a1 = await write('PATCH', 'tasks', a0.id, { secret: 'secret-a2' })
    const a2 = await write('PATCH', 'tasks', a0.id, { status: 'closed' }) // leaves the limited scope
    const b1 = await write('PATCH', 'tasks', b0.id, { status: 'open' }) // enters it
    await write('DELETE', 'tasks', b0.id)
    const end = await write('POST', 'tasks', null, { title: 'end', status: 'open' })

    const visible = [...SYSTEM, 'title', 'status']
    expect(await narrow.until(isRecord('record.create', end.id))).toEqual([
      event('record.create', pick(a0, visible)),
      event('record.update', pick(a1, visible)),
      // Moved out of reach: gone, as it was last seen (a delete, like any record that disappears).
      event('record.delete', pick(a1, visible)),
      event('record.update', pick(b1, visible)),
      event('record.delete', pick(b1, visible)),
      event('record.create', pick(end, visible)),
    ])
    expect(JSON.stringify(narrow.messages)).not.toContain('secret')
    expect(await wide.until(isRecord('record.create', end.id))).toEqual([
      event('record.create', a0),
      event('record.create', b0),
      event('record.update', a1),
      event('record.update', a2),
      event('record.update', b1),
      event('record.delete', b1),
      event('record.create', end),
    ])
    expect(a0.secret).toBe('secret-a')
    narrow.close()
    wide.close()
  })

  it("filter and ids narrow a stream (a comma list converted to the field's kind, as in a list); a record leaving the filter arrives as a delete", async () => {
    const x = await write('POST', 'tasks', null, { title: 'X', rank: 0 })
    const y = await write('POST', 'tasks', null, { title: 'Y', rank: 0 })
    const filtered = await sse(
      server.url,
      `/api/v1/collections/tasks/stream?filter=${encodeURIComponent(JSON.stringify({ rank: { _gt: 5 } }))}`,
      admin.token,
    )
    const byIds = await ws(server.url, `/api/v1/collections/tasks/stream?ids=${x.id},${y.id}`, admin.token)
    const arrayFormat = await sse(
      server.url,
      `/api/v1/collections/tasks/stream?filter=${encodeURIComponent(
        JSON.stringify([
          { field: 'title', op: 'eq', value: 'X' },
          { field: 'rank', op: 'in', value: '0,7' },
        ]),
      )}&ids=${x.id}`,
      admin.token,
    )

    const c0 = await write('POST', 'tasks', null, { title: 'C', rank: 10 })
    const d0 = await write('POST', 'tasks', null, { title: 'D', rank: 1 })
    const x1 = await write('PATCH', 'tasks', x.id, { rank: 7 })
    const d1 = await write('PATCH', 'tasks', d0.id, { rank: 6 })
    await write('PATCH', 'tasks', c0.id, { rank: 2 })
    const y1 = await write('PATCH', 'tasks', y.id, { title: 'Y2' })
    const x2 = await write('PATCH', 'tasks', x.id, { status: 'done' })

    const last = isRecord('record.update', x.id)
    const done = (m: Message) => last(m) && m.record?.status === 'done'
    expect(await filtered.until(done)).toEqual([
      event('record.create', c0),
      event('record.update', x1),
      event('record.update', d1),
      event('record.delete', c0),
      event('record.update', x2),
    ])
    expect(await byIds.until(done)).toEqual([
      event('record.update', x1),
      event('record.update', y1),
      event('record.update', x2),
    ])
    expect(await arrayFormat.until(done)).toEqual([event('record.update', x1), event('record.update', x2)])
    for (const s of [filtered, byIds, arrayFormat]) s.close()
  })

  it('a public collection streams to anonymous callers, over SSE and WebSocket', async () => {
    const anonymousSse = await sse(server.url, '/api/v1/collections/board/stream')
    const anonymousWs = await ws(server.url, '/api/v1/collections/board/stream')
    const post = await write('POST', 'board', null, { title: 'Hello, world' })
    for (const s of [anonymousSse, anonymousWs]) {
      expect(await s.until(isRecord('record.create', post.id))).toEqual([event('record.create', post, 'board')])
      s.close()
    }
  })

  it('a capability token streams its one record only, given as ?token= or as the Bearer header', async () => {
    const p = await write('POST', 'tasks', null, { title: 'P', status: 'open', secret: 'secret-p' })
    const q = await write('POST', 'tasks', null, { title: 'Q', status: 'open' })
    const minted = await call('POST', '/api/v1/capability-tokens', limited.token, {
      collection: 'tasks',
      documentId: p.id,
    })
    expect(minted.status, minted.text).toBe(201)
    const token = minted.body.data.token as string
    const viaQuery = await sse(server.url, `/api/v1/collections/tasks/stream?token=${encodeURIComponent(token)}`)
    const viaHeader = await ws(server.url, '/api/v1/collections/tasks/stream', token)

    await write('PATCH', 'tasks', q.id, { title: 'Q2' })
    await write('POST', 'tasks', null, { title: 'R', status: 'open' })
    const p1 = await write('PATCH', 'tasks', p.id, { title: 'P2' })
    const p2 = await write('PATCH', 'tasks', p.id, { status: 'closed' })
    const visible = [...SYSTEM, 'title', 'status'] // the subject's allowlist
    for (const s of [viaQuery, viaHeader]) {
      expect(await s.until(isRecord('record.delete', p.id))).toEqual([
        event('record.update', pick(p1, visible)),
        event('record.delete', pick(p1, visible)),
      ])
      expect(p2.status).toBe('closed')
      s.close()
    }
  })
})

describe('refused streams', () => {
  const tasks = '/api/v1/collections/tasks/stream'
  runScenarios(
    () => server,
    [
      {
        name: 'anonymous on a team collection: 401',
        method: 'GET',
        path: tasks,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a bad token: 401',
        method: 'GET',
        path: `${tasks}?token=nope`,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'an empty token: 401',
        method: 'GET',
        path: `${tasks}?token=`,
        status: 401,
        contains: { error: 'unauthorized' },
      },
      {
        name: 'a token both ways: 400',
        method: 'GET',
        path: `${tasks}?token=abc`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'no such collection: 404',
        method: 'GET',
        path: '/api/v1/collections/nothing_here/stream',
        as: () => owner.token,
        status: 404,
        contains: { error: 'collection_not_found' },
      },
      {
        name: 'a filter that is not JSON: 400',
        method: 'GET',
        path: `${tasks}?filter=%7Bnope`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a filter value of the wrong kind for its field: 400',
        method: 'GET',
        path: `${tasks}?filter=${encodeURIComponent('{"rank":{"_gt":"abc"}}')}`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a filter on an unknown field: 400',
        method: 'GET',
        path: `${tasks}?filter=${encodeURIComponent('{"colour":{"_eq":"red"}}')}`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
      {
        name: 'a filter on a field the caller may not read: 403',
        method: 'GET',
        path: `${tasks}?filter=${encodeURIComponent('{"secret":{"_eq":"x"}}')}`,
        as: () => limited.token,
        status: 403,
        contains: { error: 'forbidden', details: { field: 'secret' } },
      },
      {
        name: 'malformed ids: 400',
        method: 'GET',
        path: `${tasks}?ids=a,b/c`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request', details: { field: 'ids' } },
      },
      {
        name: 'too many ids: 400',
        method: 'GET',
        path: `${tasks}?ids=${Array.from({ length: 101 }, (_, i) => `id${i}`).join(',')}`,
        as: () => owner.token,
        status: 400,
        contains: { error: 'invalid_request' },
      },
    ],
  )

  it('no grant on the collection: 403 naming it, over SSE and in the WebSocket handshake', async () => {
    const nobody = await personWith([{ resource: 'collections/board', action: 'read' }])
    const viaSse = await refusal(sse(server.url, '/api/v1/collections/tasks/stream', nobody.token))
    const viaWs = await refusal(ws(server.url, '/api/v1/collections/tasks/stream', nobody.token))
    const expected = {
      error: 'forbidden',
      message: 'Missing permission collections/tasks:read',
      details: { resource: 'collections/tasks', action: 'read' },
    }
    expect(viaSse).toMatchObject({ status: 403, body: expected })
    expect(viaWs).toMatchObject({ status: 403, body: expected })
    expect(viaWs.headers?.['x-api-version']).toBe('v1')
    expect(viaWs.headers?.['x-request-id']).toMatch(/^[\w.:-]{1,128}$/)
    expect(await refusal(ws(server.url, '/api/v1/collections/tasks/stream'))).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    })
  })

  it('an upgrade to anything but WebSocket is 400', async () => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    socket.write(
      `GET /api/v1/collections/board/stream HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`,
    )
    const text = await new Promise<string>((resolve) => {
      let all = ''
      socket.on('data', (d) => (all += d.toString()))
      socket.on('close', () => resolve(all))
    })
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'invalid_request' })
  })
})

describe('rights that change while a stream is open apply from the next event', () => {
  it('a wider allowlist shows more at once; losing the read grant closes the stream (forbidden)', async () => {
    const person = await personWith([{ resource: 'collections/tasks', action: 'read', fields: ['title'] }])
    const stream = await sse(server.url, '/api/v1/collections/tasks/stream', person.token)
    const t0 = await write('POST', 'tasks', null, { title: 'T', status: 'open', rank: 3 })
    await stream.until(isRecord('record.create', t0.id))

    const wider = await call('PUT', `/api/v1/roles/${person.roleId}/grants`, owner.token, {
      grants: [{ resource: 'collections/tasks', action: 'read', fields: ['title', 'status'] }],
    })
    expect(wider.status, wider.text).toBe(200)
    const t1 = await write('PATCH', 'tasks', t0.id, { rank: 4 })
    await stream.until(isRecord('record.update', t0.id))

    const none = await call('PUT', `/api/v1/roles/${person.roleId}/grants`, owner.token, { grants: [] })
    expect(none.status, none.text).toBe(200)
    await write('PATCH', 'tasks', t0.id, { rank: 5 })
    expect(await stream.ended).toEqual({ clean: true })
    expect(stream.messages).toEqual([
      event('record.create', pick(t0, [...SYSTEM, 'title'])),
      event('record.update', pick(t1, [...SYSTEM, 'title', 'status'])),
      { type: 'stream.closed', error: 'forbidden', message: 'Missing permission collections/tasks:read' },
    ])
    // Reconnecting is refused the same way.
    expect((await refusal(sse(server.url, '/api/v1/collections/tasks/stream', person.token))).status).toBe(403)
  })

  it("signing out closes the session's WebSocket stream (4401 after a stream.closed message)", async () => {
    const person = await createAccount(server, owner.token, { role: 'viewer' })
    const stream = await ws(server.url, '/api/v1/collections/board/stream', person.token)
    expect((await call('POST', '/api/auth/sign-out', person.token)).status).toBe(200)
    await write('POST', 'board', null, { title: 'after sign-out' })
    expect(await stream.ended).toEqual({ code: 4401 })
    expect(stream.messages).toEqual([{ type: 'stream.closed', error: 'unauthorized', message: expect.any(String) }])
  })
})

/** A tuned instance with its owner and a `logs` collection. */
async function tunedWithLogs(
  realtime: RealtimeOptions,
  env: Record<string, string> = {},
): Promise<{ tuned: TestServer; boss: Account }> {
  const tuned = await startServer(env, { realtime })
  const boss = await signUpOwner(tuned)
  const reply = await tuned.request('POST', '/api/v1/collections', {
    token: boss.token,
    body: { name: 'logs', fields: [{ name: 'line', type: 'text', required: true }] },
  })
  expect(reply.status, reply.text).toBe(201)
  return { tuned, boss }
}

describe('heartbeat and CORS', () => {
  let tuned: TestServer
  let boss: Account
  beforeAll(async () => {
    ;({ tuned, boss } = await tunedWithLogs({ heartbeatMs: 20 }, { CORS_ORIGINS: 'https://app.example.com' }))
  })

  it('an event stream carries the CORS headers of an allowed origin', async () => {
    const controller = new AbortController()
    const res = await fetch(`${tuned.url}/api/v1/collections/logs/stream`, {
      headers: { authorization: `Bearer ${boss.token}`, origin: 'https://app.example.com' },
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    controller.abort()
  })
  afterAll(async () => {
    await tuned?.stop()
  })

  it('SSE sends `: heartbeat` comments and WebSocket sends pings, at the injected interval', async () => {
    const viaSse = await sse(tuned.url, '/api/v1/collections/logs/stream', boss.token)
    const viaWs = await ws(tuned.url, '/api/v1/collections/logs/stream', boss.token)
    await viaSse.untilSignal('heartbeat')
    await viaWs.untilSignal('ping')
    expect(viaSse.messages).toEqual([])
    viaSse.close()
    viaWs.close()
  })
})

describe('connections: slow clients, shutdown', () => {
  let tuned: TestServer
  let boss: Account
  beforeAll(async () => {
    // The default 25 s heartbeat: a stalled WebSocket client is dropped here for its buffer, not for a missing pong.
    ;({ tuned, boss } = await tunedWithLogs({ maxBufferedBytes: 64 * 1024 }))
  })
  afterAll(async () => {
    await tuned?.stop()
  })

  /** Resolves once the instance has noticed that its streams closed (a client's close arrives asynchronously). */
  async function streamsOpen(count: number): Promise<void> {
    while (tuned.app.realtime.openStreams() !== count) await new Promise((resolve) => setImmediate(resolve))
  }

  /** A raw connection that sends `request`, reads until `ready` arrives, then stops reading. */
  async function stalledClient(request: string, ready: string): Promise<{ socket: Socket; resume(): Promise<number> }> {
    const socket = connect(Number(new URL(tuned.url).port), '127.0.0.1')
    let seen = ''
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        seen += d.toString('latin1')
        if (!seen.includes(ready)) return
        socket.off('data', onData)
        socket.pause()
        resolve()
      }
      socket.on('data', onData)
      socket.write(request)
    })
    return {
      socket,
      // Reads what the server managed to send until it closed the connection; the byte count.
      resume: () =>
        new Promise((resolve) => {
          let bytes = 0
          socket.on('data', (d: Buffer) => (bytes += d.length))
          socket.on('error', () => {})
          socket.on('close', () => resolve(bytes))
          socket.resume()
        }),
    }
  }

  /** Writes ~100 KB records until the instance serves `target` streams; the number written. */
  async function writeUntilDropped(target: number): Promise<number> {
    const line = 'x'.repeat(100_000)
    for (let i = 1; i <= 400; i++) {
      const reply = await tuned.request('POST', '/api/v1/collections/logs/records', {
        token: boss.token,
        body: { line },
      })
      expect(reply.status, reply.text).toBe(201)
      if (tuned.app.realtime.openStreams() === target) return i
    }
    throw new Error('the stalled client was never dropped')
  }

  it('an SSE client that stops reading is dropped once a bounded amount waits for it', async () => {
    const before = 0
    await streamsOpen(before)
    const client = await stalledClient(
      `GET /api/v1/collections/logs/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${boss.token}\r\n\r\n`,
      ': connected\n\n',
    )
    expect(tuned.app.realtime.openStreams()).toBe(before + 1)
    const written = await writeUntilDropped(before)
    // The server closed the connection itself, and what waited for the client was discarded.
    const received = await client.resume()
    expect(written).toBeGreaterThan(1)
    expect(received).toBeLessThan(written * 100_000)
  })

  it('a WebSocket client that stops reading is dropped the same way', async () => {
    const before = 0
    await streamsOpen(before)
    const key = randomBytes(16).toString('base64')
    const client = await stalledClient(
      `GET /api/v1/collections/logs/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${boss.token}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`,
      'stream.connected',
    )
    expect(tuned.app.realtime.openStreams()).toBe(before + 1)
    const written = await writeUntilDropped(before)
    const received = await client.resume()
    expect(written).toBeGreaterThan(1)
    expect(received).toBeLessThan(written * 100_000)
  })

  it('stopping the server ends SSE streams at once (a clean end of body) and closes WebSockets with 1001', async () => {
    const viaSse = await sse(tuned.url, '/api/v1/collections/logs/stream', boss.token)
    const viaWs = await ws(tuned.url, '/api/v1/collections/logs/stream', boss.token)
    // The harness stops with a 1 s timeout: a stream still open then would be cut (an error, not a clean end).
    await tuned.stop()
    expect(await viaSse.ended).toEqual({ clean: true })
    expect(await viaWs.ended).toEqual({ code: 1001 })
    expect(tuned.app.realtime.openStreams()).toBe(0)
  })
})

const scaleOut = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)
describe.runIf(scaleOut)(
  'scale-out: two instances on one PostgreSQL and Redis (runs only when TEST_DATABASE_URL and TEST_REDIS_URL are set)',
  () => {
    let a: TestServer
    let b: TestServer
    let boss: Account
    beforeAll(async () => {
      const env = { REDIS_URL: process.env.TEST_REDIS_URL ?? '' }
      a = await startServer(env)
      b = await startSibling(a, env)
      boss = await signUpOwner(a)
      const reply = await a.request('POST', '/api/v1/collections', {
        token: boss.token,
        body: { name: 'notes', fields: [{ name: 'text', type: 'text', required: true }] },
      })
      expect(reply.status, reply.text).toBe(201)
    })
    afterAll(async () => {
      await b?.stop()
      await a?.stop()
    })

    it('an event written on either instance reaches the subscribers of both, exactly once each', async () => {
      const onA = await sse(a.url, '/api/v1/collections/notes/stream', boss.token)
      const onB = await ws(b.url, '/api/v1/collections/notes/stream', boss.token)
      const alsoOnB = await sse(b.url, '/api/v1/collections/notes/stream', boss.token)
      const n1 = await write('POST', 'notes', null, { text: 'written on A' }, a, boss.token)
      const n2 = await write('POST', 'notes', null, { text: 'written on B' }, b, boss.token)
      const n1b = await write('PATCH', 'notes', n1.id, { text: 'changed on B' }, b, boss.token)
      await write('DELETE', 'notes', n2.id, undefined, a, boss.token)
      const end = await write('POST', 'notes', null, { text: 'end' }, a, boss.token)
      const expected = [
        event('record.create', n1, 'notes'),
        event('record.create', n2, 'notes'),
        event('record.update', n1b, 'notes'),
        event('record.delete', n2, 'notes'),
        event('record.create', end, 'notes'),
      ]
      for (const s of [onA, onB, alsoOnB]) expect(await s.until(isRecord('record.create', end.id))).toEqual(expected)
      // One more round trip: nothing further (no duplicate) arrived behind the sentinel.
      const after = await write('POST', 'notes', null, { text: 'after' }, b, boss.token)
      for (const s of [onA, onB, alsoOnB]) {
        expect(await s.until(isRecord('record.create', after.id))).toEqual([
          ...expected,
          event('record.create', after, 'notes'),
        ])
        s.close()
      }
    })
  },
)

describe('heartbeats and token expiry follow the app’s clock', () => {
  // A clock that moves only when told, and an hour-long heartbeat that real time never reaches in a test.
  const clock = createManualClock()
  const heartbeatMs = 3_600_000
  let timed: TestServer
  let boss: Account
  beforeAll(async () => {
    timed = await startServer({}, { clock, realtime: { heartbeatMs } })
    boss = await signUpOwner(timed)
    const reply = await timed.request('POST', '/api/v1/collections', {
      token: boss.token,
      body: { name: 'logs', fields: [{ name: 'line', type: 'text', required: true }] },
    })
    expect(reply.status, reply.text).toBe(201)
  })
  afterAll(async () => {
    await timed?.stop()
  })

  it('SSE heartbeats and WebSocket pings go out when the clock reaches the interval, not before', async () => {
    const viaSse = await sse(timed.url, '/api/v1/collections/logs/stream', boss.token)
    const viaWs = await ws(timed.url, '/api/v1/collections/logs/stream', boss.token)
    await clock.advance(heartbeatMs - 1)
    // A write after the advance: once it arrived, whatever the advance sent arrived before it.
    const line = await write('POST', 'logs', null, { line: 'one' }, timed, boss.token)
    for (const s of [viaSse, viaWs]) await s.until(isRecord('record.create', line.id))
    expect([viaSse.signals, viaWs.signals]).toEqual([['connected'], []])
    await clock.advance(1)
    await viaSse.untilSignal('heartbeat')
    await viaWs.untilSignal('ping')
    viaSse.close()
    viaWs.close()
  })

  it('a capability-token stream ends with unauthorized when the clock reaches the token’s expiry', async () => {
    const line = await write('POST', 'logs', null, { line: 'watched' }, timed, boss.token)
    const minted = await timed.request('POST', '/api/v1/capability-tokens', {
      token: boss.token,
      body: { collection: 'logs', documentId: line.id, expiresIn: 60 },
    })
    expect(minted.status, minted.text).toBe(201)
    const stream = await sse(
      timed.url,
      `/api/v1/collections/logs/stream?token=${encodeURIComponent(minted.body.data.token)}`,
    )
    await clock.advance(minted.body.data.expiresAt * 1000 - clock.now() - 1)
    const changed = await write('PATCH', 'logs', line.id, { line: 'still watched' }, timed, boss.token)
    await stream.until(isRecord('record.update', line.id))
    await clock.advance(1)
    expect(await stream.ended).toEqual({ clean: true })
    expect(stream.messages).toEqual([
      event('record.update', changed, 'logs'),
      { type: 'stream.closed', error: 'unauthorized', message: 'The capability token has expired' },
    ])
  })
})
