import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'

// Realtime fan-out (decision 080): streams share a frame only when it is provably the same for them, and a
// subscriber that does not read is closed with a documented code while what waits for it stays bounded.

let server: TestServer
let owner: Account

type Message = { type: string; record?: Record<string, unknown> }

/** A WebSocket subscriber collecting messages; resolves once the server greeted it. */
async function subscribe(token: string): Promise<{ messages: Message[]; socket: WebSocket; closed: Promise<number> }> {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/v1/collections/tasks/stream`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const messages: Message[] = []
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject)
    socket.once('message', () => resolve()) // stream.connected
  })
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as Message))
  return { messages, socket, closed }
}

async function until(messages: Message[], id: string): Promise<Message[]> {
  while (!messages.some((m) => m.record?.id === id)) await new Promise((resolve) => setTimeout(resolve, 5))
  return messages
}

async function role(name: string, ...grants: unknown[]): Promise<void> {
  const created = await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name } })
  expect(created.status, created.text).toBe(201)
  const put = await server.request('PUT', `/api/v1/roles/${created.body.data.id}/grants`, {
    token: owner.token,
    body: { grants },
  })
  expect(put.status, put.text).toBe(200)
}

async function create(body: Record<string, unknown>, token = owner.token): Promise<Record<string, any>> {
  const reply = await server.request('POST', '/api/v1/collections/tasks/records', { token, body })
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

beforeAll(async () => {
  server = await startServer({}, { realtime: { maxBufferedBytes: 64 * 1024 } })
  owner = await signUpOwner(server)
  const reply = await server.request('POST', '/api/v1/collections', {
    token: owner.token,
    body: {
      name: 'tasks',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'secret', type: 'text', required: false },
        { name: 'body', type: 'text', required: false },
      ],
      accessControl: { preset: 'team' },
    },
  })
  expect(reply.status, reply.text).toBe(201)
})
afterAll(async () => {
  await server?.stop()
})

describe('visibility classes', () => {
  it('people whose grants give different frames get their own; people with the same grants get the same', async () => {
    await role('fan_all', { resource: 'collections/tasks', action: 'read' })
    await role('fan_title', { resource: 'collections/tasks', action: 'read', fields: ['title'] })
    // A row filter naming $CURRENT_USER: the same role, a different frame (or none) per person.
    await role(
      'fan_own',
      {
        resource: 'collections/tasks',
        action: 'read',
        item_filter: { _or: [{ created_by: { _eq: '$CURRENT_USER' } }, { title: { _eq: 'everyone' } }] },
      },
      { resource: 'collections/tasks', action: 'create' },
    )
    const [all1, all2, title1, title2, own1, own2] = await Promise.all(
      ['fan_all', 'fan_all', 'fan_title', 'fan_title', 'fan_own', 'fan_own'].map((r) =>
        createAccount(server, owner.token, { role: r }),
      ),
    )
    const streams = await Promise.all([all1, all2, title1, title2, own1, own2].map((a) => subscribe(a!.token)))

    // own1's record is in its view, and in no one else's of its role.
    const mine = await create({ title: 'mine', secret: 's1' }, own1!.token)
    const everyone = await create({ title: 'everyone', secret: 's2' })
    for (const s of streams) await until(s.messages, everyone.id)
    const records = streams.map((s) => s.messages.map((m) => m.record))
    const full = (r: Record<string, any>) => r
    const titleOnly = (r: Record<string, any>) => {
      const { secret: _s, body: _b, ...rest } = r
      return rest
    }
    expect(records[0]).toEqual([full(mine), full(everyone)])
    expect(records[1]).toEqual(records[0])
    expect(records[2]).toEqual([titleOnly(mine), titleOnly(everyone)])
    expect(records[3]).toEqual(records[2])
    expect(records[4]).toEqual([full(mine), full(everyone)])
    expect(records[5]).toEqual([full(everyone)])
    for (const s of streams) s.socket.close()
  })
})

describe('slow subscribers', () => {
  /** Writes ~100 KB records until the server serves `target` streams; the number written. */
  async function writeUntilOpen(target: number): Promise<number> {
    const body = 'x'.repeat(100_000)
    for (let i = 1; i <= 400; i++) {
      await create({ title: `big ${i}`, body })
      if (server.app.realtime.openStreams() === target) return i
    }
    throw new Error('the stalled client was never dropped')
  }

  it('a WebSocket client that stops reading is closed with 4429, and what waited for it stays bounded', async () => {
    while (server.app.realtime.openStreams() !== 0) await new Promise((resolve) => setImmediate(resolve))
    const stalled = await subscribe(owner.token)
    const reader = await subscribe(owner.token)
    stalled.socket.pause()
    let received = 0
    stalled.socket.on('message', (data: Buffer) => (received += data.length))
    const written = await writeUntilOpen(1)
    stalled.socket.resume()
    expect(await stalled.closed).toBe(4429)
    // It got less than was written (the rest was never queued for it); the reader got everything.
    expect(received).toBeLessThan(written * 100_000)
    const last = await create({ title: 'after' })
    expect((await until(reader.messages, last.id)).length).toBe(written + 1)
    reader.socket.close()
  })

  it('an SSE client that stops reading has its stream ended, with less than was written reaching it', async () => {
    while (server.app.realtime.openStreams() !== 0) await new Promise((resolve) => setImmediate(resolve))
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    await new Promise<void>((resolve) => {
      let seen = ''
      const onData = (d: Buffer) => {
        seen += d.toString('latin1')
        if (!seen.includes(': connected\n\n')) return
        socket.off('data', onData)
        socket.pause()
        resolve()
      }
      socket.on('data', onData)
      socket.write(
        `GET /api/v1/collections/tasks/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.token}\r\n\r\n`,
      )
    })
    const written = await writeUntilOpen(0)
    const received = await new Promise<number>((resolve) => {
      let bytes = 0
      socket.on('data', (d: Buffer) => (bytes += d.length))
      socket.on('error', () => {})
      socket.on('close', () => resolve(bytes))
      socket.resume()
    })
    expect(received).toBeLessThan(written * 100_000)
  })
})
