import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import {
  createClient,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
  type PlinthClient,
  type Subscription,
  type SubscriptionState,
} from '../../packages/client/src/index.js'
import { createCollection, createRecord, recordsPath } from '../api/records-fixtures.js'
import { freePort, send, startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { kill, serve, type Running } from '../support/serve-process.js'
import { clientFor, collector, summary } from './realtime-support.js'

// The client's realtime part against a running server: events over WebSocket and over SSE, the fallback
// from a refused socket to SSE, refusals as typed errors, close() ending the server's stream, and a
// subscription that lives through a server restart on the same port and data directory on its own.

type Ticket = { title: string; status: string | null }
const fields = [
  { name: 'title', type: 'text', required: true },
  { name: 'status', type: 'text', required: false },
]
const open = { status: { _eq: 'open' } }

/** Type-level (checked by tsc, never run): events are typed by the record type a subscription names. */
export function typedEvents(client: PlinthClient): void {
  void client.subscribe<Ticket>('tickets', open, (event) => {
    if (event.type === 'gap') {
      const since: Date = event.since
      return void since
    }
    const title: string = event.record.title
    const version: number = event.record._version
    // @ts-expect-error not a field of Ticket
    void event.record.nope
    void [title, version]
  })
}

describe('realtime subscriptions', () => {
  let server: TestServer
  let owner: Account
  const closeLater: Subscription[] = []

  beforeAll(async () => {
    server = await startServer()
    owner = await signUpOwner(server)
    await createCollection(server, owner.token, 'tickets', fields)
  })
  afterAll(async () => {
    await Promise.all(closeLater.map((s) => s.close()))
    await server?.stop()
  })

  const write = (title: string, status: string) => createRecord(server, owner.token, 'tickets', { title, status })

  for (const transport of ['websocket', 'sse'] as const) {
    it(`${transport}: receives the filter's creates, updates and deletes (a record leaving the filter is a delete), typed`, async () => {
      const client = clientFor(server.url, owner.token)
      const seen = collector<Ticket>()
      const sub = client.subscribe<Ticket>('tickets', open, seen.handler, { transport })
      closeLater.push(sub)
      await sub.ready
      expect(sub.state).toBe('open')
      expect(sub.transport).toBe(transport)

      const a = await write(`${transport} a`, 'open')
      await write(`${transport} hidden`, 'closed')
      const moved = await server.request('PATCH', recordsPath('tickets', a.id), {
        token: owner.token,
        body: { status: 'done' },
      })
      expect(moved.status, moved.text).toBe(200)
      await write(`${transport} sentinel`, 'open')
      await seen.until((e) => e.type !== 'gap' && e.record.title === `${transport} sentinel`)

      expect(summary(seen.events)).toEqual([
        `record.create ${transport} a`,
        `record.delete ${transport} a`,
        `record.create ${transport} sentinel`,
      ])
      const first = seen.events[0]!
      if (first.type === 'gap') throw new Error('no gap expected')
      expect(first).toMatchObject({ collection: 'tickets', record: { id: a.id, title: `${transport} a`, _version: 1 } })
      expect(typeof first.at).toBe('number')
      // SSE carries each write's id; the WebSocket protocol does not.
      expect(first.eventId === undefined).toBe(transport === 'websocket')
    })
  }

  it('auto: a WebSocket that cannot connect falls back to SSE and receives events', async () => {
    // A socket aimed at a port where nothing listens: refused, as a proxy that blocks upgrades would.
    const deadPort = await freePort()
    class RefusedSocket extends WebSocket {
      constructor(url: string) {
        super(url.replace(/:\d+\//, `:${deadPort}/`))
      }
    }
    const tokens = clientFor(server.url, owner.token).transport.tokens
    const client = createClient({
      url: server.url,
      tokens,
      WebSocket: RefusedSocket,
    })
    const seen = collector<Ticket>()
    const sub = client.subscribe<Ticket>('tickets', seen.handler)
    closeLater.push(sub)
    await sub.ready
    expect(sub.transport).toBe('sse')
    await write('fallback', 'open')
    await seen.until((e) => e.type !== 'gap' && e.record.title === 'fallback')
  })

  // Node 20 has no WebSocket; on Node 22+ the platform's would be taken unless the client says null.
  it('auto without a WebSocket constructor (WebSocket: null, or Node 20) uses SSE', async () => {
    const client = clientFor(server.url, owner.token, { webSocket: false })
    const seen = collector<Ticket>()
    const sub = client.subscribe<Ticket>('tickets', seen.handler)
    closeLater.push(sub)
    await sub.ready
    expect(sub.transport).toBe('sse')
    await write('no socket', 'open')
    await seen.until((e) => e.type !== 'gap' && e.record.title === 'no socket')
  })

  it('signing out while subscribed ends both transports with UnauthorizedError at the next event, without retrying', async () => {
    const person = await createAccount(server, owner.token, { role: 'editor' })
    const client = clientFor(server.url, person.token)
    const subs = (['websocket', 'sse'] as const).map((transport) =>
      client.subscribe('tickets', () => {}, { transport, reconnect: { initialDelayMs: 1 } }),
    )
    await Promise.all(subs.map((s) => s.ready))
    expect((await server.request('POST', '/api/auth/sign-out', { token: person.token })).status).toBe(200)
    await write('after sign-out', 'open')
    for (const sub of subs) {
      const error = await sub.closed
      expect(error).toBeInstanceOf(UnauthorizedError)
      expect(error).toMatchObject({ status: 401, code: 'unauthorized' })
      expect(sub.state).toBe('closed')
    }
  })

  for (const transport of ['websocket', 'sse'] as const) {
    it(`${transport}: refusals end the subscription with the typed error, and it does not retry`, async () => {
      const client = clientFor(server.url, owner.token)
      const missing = client.subscribe('nope', () => {}, { transport })
      await expect(missing.ready).rejects.toBeInstanceOf(NotFoundError)
      await expect(missing.ready).rejects.toMatchObject({ status: 404, code: 'collection_not_found' })
      expect(missing.state).toBe('closed')
      expect(await missing.closed).toBeInstanceOf(NotFoundError)

      const badFilter = client.subscribe('tickets', { nofield: { _eq: 1 } }, () => {}, { transport })
      await expect(badFilter.ready).rejects.toBeInstanceOf(ValidationError)
      await expect(badFilter.ready).rejects.toMatchObject({ code: 'invalid_request' })

      const states: SubscriptionState[] = []
      const anonymous = clientFor(server.url).subscribe('tickets', () => {}, {
        transport,
        onState: (state) => states.push(state),
      })
      await expect(anonymous.ready).rejects.toBeInstanceOf(UnauthorizedError)
      expect(states).toEqual(['closed'])
    })

    it(`${transport}: close() ends the server's stream and no event arrives after it`, async () => {
      const before = server.app.realtime.openStreams()
      const client = clientFor(server.url, owner.token)
      const seen = collector<Ticket>()
      const sub = client.subscribe<Ticket>('tickets', seen.handler, { transport })
      await sub.ready
      expect(server.app.realtime.openStreams()).toBe(before + 1)
      await sub.close()
      expect(sub.state).toBe('closed')
      expect(await sub.closed).toBeUndefined()
      // The server sees the connection go when its socket closes.
      while (server.app.realtime.openStreams() !== before) await new Promise((resolve) => setTimeout(resolve, 10))

      const watcher = collector<Ticket>()
      const other = client.subscribe<Ticket>('tickets', watcher.handler, { transport })
      closeLater.push(other)
      await other.ready
      await write(`after close ${transport}`, 'open')
      await watcher.until((e) => e.type !== 'gap' && e.record.title === `after close ${transport}`)
      expect(seen.events).toEqual([])
    })
  }
})

// A real `plinth serve` process, stopped (SIGTERM: streams closed as on shutdown; SIGKILL: connections cut
// with no goodbye) and started again with the same port and DATA_DIR (and database): each subscription
// comes back by itself, reports the gap, and receives what is written after.
describe.each(['SIGTERM', 'SIGKILL'] as const)(
  'reconnect after the server restarts (%s; same port, same data)',
  (signal) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-sdk-restart-'))
    let database: { url: string; drop: () => Promise<void> } | null = null
    let running: Running | null = null
    const subs: Subscription[] = []

    afterAll(async () => {
      await Promise.all(subs.map((s) => s.close()))
      if (running) await kill(running)
      await database?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('both transports resume on their own, report the gap, and receive later events', {
      timeout: 120_000,
    }, async () => {
      if (testDatabaseUrl()) database = await createTestDatabase(testDatabaseUrl()!)
      const port = await freePort()
      const env = {
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        PASSWORD_HASH_ITERATIONS: '1000',
        ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
      }
      running = await serve(env)
      const request = (method: string, path: string, body?: unknown, token?: string) =>
        send(running!.url, method, path, { body, token })
      const signUp = await request('POST', '/api/auth/sign-up/email', {
        email: 'restart@example.com',
        password: 'restart password',
        name: 'R',
      })
      expect(signUp.status, signUp.text).toBe(200)
      const token = signUp.body.token as string
      const created = await request('POST', '/api/v1/collections', { name: 'tickets', fields }, token)
      expect(created.status, created.text).toBe(201)
      const write = async (title: string) => {
        const reply = await request('POST', recordsPath('tickets'), { title, status: 'open' }, token)
        expect(reply.status, reply.text).toBe(201)
      }

      const client = clientFor(running.url, token)
      const reconnect = { initialDelayMs: 50, maxDelayMs: 500 }
      const states: Record<string, SubscriptionState[]> = { websocket: [], sse: [] }
      const seen = { websocket: collector<Ticket>(), sse: collector<Ticket>() }
      for (const transport of ['websocket', 'sse'] as const) {
        const sub = client.subscribe<Ticket>('tickets', open, seen[transport].handler, {
          transport,
          reconnect,
          onState: (state) => states[transport]!.push(state),
        })
        subs.push(sub)
        await sub.ready
      }
      await write('before')
      for (const transport of ['websocket', 'sse'] as const) {
        await seen[transport].until((e) => e.type !== 'gap' && e.record.title === 'before')
      }

      const exited = new Promise((resolve) => running!.child.once('exit', resolve))
      running.child.kill(signal)
      await exited
      running = await serve(env)
      expect(running.url).toBe(`http://127.0.0.1:${port}`)
      // Written on the new process, perhaps before the streams are back: then lost to them, as the gap says.
      await write('during')
      for (const transport of ['websocket', 'sse'] as const) {
        await seen[transport].until((e) => e.type === 'gap')
      }
      await write('after')
      for (const transport of ['websocket', 'sse'] as const) {
        await seen[transport].until((e) => e.type !== 'gap' && e.record.title === 'after')
        const names = summary(seen[transport].events).filter((n) => n !== 'record.create during')
        expect(names).toEqual(['record.create before', 'gap', 'record.create after'])
        const gap = seen[transport].events.find((e) => e.type === 'gap')!
        expect(gap).toMatchObject({ type: 'gap', collection: 'tickets', since: expect.any(Date) })
        expect(states[transport]!.slice(0, 2)).toEqual(['open', 'reconnecting'])
        expect(states[transport]!.at(-1)).toBe('open')
      }
      expect(subs.map((s) => [s.state, s.transport])).toEqual([
        ['open', 'websocket'],
        ['open', 'sse'],
      ])
    })
  },
)
