import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { send, startServer } from '../support/harness.js'
import { signUpOwner } from '../support/identity.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { serve, type Running } from '../support/serve-process.js'

/**
 * Webhook deliveries survive a SIGKILL (issue 26, decision 055): in embedded mode (no REDIS_URL) their jobs
 * live in the system database. A real server process, killed with deliveries in flight to a receiver that
 * holds them, deliveries waiting behind those, and one retrying after a 503; restarted on the same DATA_DIR
 * (or PostgreSQL database, with TEST_DATABASE_URL), it delivers each of them, and the receiver answers each
 * delivery id with a 2xx once. The retry keeps its backoff (decision 034's 30 s), so this test takes that long.
 * Then, in process: deliveries whose jobs were lost (a memory queue before decision 055, a Redis flush, a
 * crash between the row and its job) are queued again at start-up, their attempts numbered on.
 */

type Request = (
  method: string,
  path: string,
  options?: { token?: string; body?: unknown },
) => Promise<{ status: number; body: any; text: string }>

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The receiver: `hold` keeps /slow requests open unanswered; /flaky answers 503 first. Counts 2xx answers per delivery id. */
function startReceiver() {
  const state = { hold: true, flakyFailed: false }
  const held: ServerResponse[] = []
  const acked = new Map<string, number>()
  const seen = new Map<string, number>()
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      const id = String(req.headers['x-service-delivery'])
      seen.set(id, (seen.get(id) ?? 0) + 1)
      if (req.url === '/slow' && state.hold) return void held.push(res)
      if (req.url === '/flaky' && !state.flakyFailed) {
        state.flakyFailed = true
        return void res.writeHead(503).end()
      }
      acked.set(id, (acked.get(id) ?? 0) + 1)
      res.writeHead(200).end('{}')
    })
  })
  return new Promise<{
    port: number
    state: typeof state
    held: ServerResponse[]
    acked: Map<string, number>
    seen: Map<string, number>
    close: () => Promise<void>
  }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        state,
        held,
        acked,
        seen,
        close: () =>
          new Promise<void>((done) => {
            for (const res of held) res.destroy()
            server.closeAllConnections()
            server.close(() => done())
          }),
      })
    })
  })
}

describe('SIGKILL with webhook deliveries pending and retrying, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-kill-webhooks-'))
  let database: { url: string; drop: () => Promise<void> } | null = null
  let running: Running | null = null
  let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null

  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      const exited = new Promise((resolve) => running!.child.once('exit', resolve))
      running.child.kill('SIGKILL')
      await exited
    }
    await receiver?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('delivers every pending and retrying delivery after the restart, each acknowledged once', {
    timeout: 150_000,
  }, async () => {
    if (testDatabaseUrl()) database = await createTestDatabase(testDatabaseUrl()!)
    receiver = await startReceiver()
    // No REDIS_URL: embedded mode. The receiver is on loopback, so private addresses are allowed.
    const env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      PASSWORD_HASH_ITERATIONS: '1000',
      ALLOW_PRIVATE_NETWORK: 'true',
      ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
    }
    running = await serve(env)
    const request: Request = (method, path, options) => send(running!.url, method, path, options)
    const signUp = await request('POST', '/api/auth/sign-up/email', {
      body: { email: 'hooks@example.com', password: 'hooks password', name: 'H' },
    })
    expect(signUp.status, signUp.text).toBe(200)
    let token = signUp.body.token as string
    const hooks: Record<'slow' | 'flaky', string> = { slow: '', flaky: '' }
    for (const path of ['slow', 'flaky'] as const) {
      const created = await request('POST', '/api/v1/collections', {
        token,
        body: { name: path, fields: [{ name: 'title', type: 'text', required: false }] },
      })
      expect(created.status, created.text).toBe(201)
      const hook = await request('POST', '/api/v1/webhooks', {
        token,
        body: { collection: path, events: ['record.create'], url: `http://127.0.0.1:${receiver.port}/${path}` },
      })
      expect(hook.status, hook.text).toBe(201)
      hooks[path] = hook.body.data.id
    }
    const deliveries = async (hook: string): Promise<any[]> => {
      const reply = await request('GET', `/api/v1/webhooks/${hook}/deliveries?limit=100`, { token })
      expect(reply.status, reply.text).toBe(200)
      return reply.body.data
    }
    const record = async (collection: string, title: string) => {
      const reply = await request('POST', `/api/v1/collections/${collection}/records`, { token, body: { title } })
      expect(reply.status, reply.text).toBe(201)
    }

    // One delivery retrying: its first attempt got 503; the next is due 30 s later.
    await record('flaky', 'f')
    await until(
      () => deliveries(hooks.flaky),
      (list) => list[0]?.status === 'retrying',
      'the retrying delivery',
    )
    // Six to a receiver that holds them: four in flight (the queue's concurrency), two waiting behind.
    for (let i = 0; i < 6; i++) await record('slow', `s${i}`)
    await until(
      async () => receiver!.held.length,
      (n) => n === 4,
      'four deliveries in flight',
    )
    const before = await deliveries(hooks.slow)
    expect(before.map((d) => d.status)).toEqual(Array(6).fill('pending'))

    const exited = new Promise((resolve) => running!.child.once('exit', resolve))
    running.child.kill('SIGKILL')
    await exited
    // The deliveries in flight were cut with the process; the receiver answers from now on.
    receiver.state.hold = false
    for (const res of receiver.held.splice(0)) res.destroy()
    running = await serve(env)

    const signIn = await request('POST', '/api/auth/sign-in/email', {
      body: { email: 'hooks@example.com', password: 'hooks password' },
    })
    expect(signIn.status, signIn.text).toBe(200)
    token = signIn.body.token as string
    const slow = await until(
      () => deliveries(hooks.slow),
      (list) => list.length === 6 && list.every((d) => d.status === 'success'),
      'the six deliveries',
      20_000,
    )
    const flaky = await until(
      () => deliveries(hooks.flaky),
      (list) => list[0]?.status === 'success',
      'the retried delivery',
      60_000,
    )

    const ids = [...slow, ...flaky].map((d) => d.id as string)
    expect(new Set(ids).size).toBe(7)
    // Each acknowledged once; a delivery cut in flight reached the receiver twice, never more.
    expect(ids.map((id) => receiver!.acked.get(id))).toEqual(Array(7).fill(1))
    for (const id of ids) expect(receiver.seen.get(id)).toBeLessThanOrEqual(2)
    expect(flaky[0].attemptLog.map((a: { attempt: number; status: number }) => [a.attempt, a.status])).toEqual([
      [1, 503],
      [2, 200],
    ])
    for (const delivery of slow) expect(delivery.attemptLog.map((a: { status: number }) => a.status)).toEqual([200])
  })
})

describe('unsettled deliveries without a job are queued again at start-up', () => {
  it('delivers a pending and a retrying delivery left without a job, numbering attempts on from their log', async () => {
    const receiver = await startReceiver()
    receiver.state.hold = false
    receiver.state.flakyFailed = true
    let server = await startServer({ ALLOW_PRIVATE_NETWORK: 'true' }, { webhookDelivery: { backoffMs: 1 } })
    try {
      const owner = await signUpOwner(server)
      const created = await server.request('POST', '/api/v1/collections', {
        token: owner.token,
        body: { name: 'lost', fields: [{ name: 'title', type: 'text', required: false }] },
      })
      expect(created.status, created.text).toBe(201)
      // Listening to deletes only: the rows below are the only deliveries.
      const hook = await server.request('POST', '/api/v1/webhooks', {
        token: owner.token,
        body: { collection: 'lost', events: ['record.delete'], url: `http://127.0.0.1:${receiver.port}/slow` },
      })
      expect(hook.status, hook.text).toBe(201)
      const webhookId = hook.body.data.id as string
      const projectId = (
        await server.app.registry.system.db
          .selectFrom('webhooks')
          .select('project_id')
          .where('id', '=', webhookId)
          .executeTakeFirstOrThrow()
      ).project_id
      const row = (id: string, status: string, attempts: number) => ({
        id,
        project_id: projectId,
        webhook_id: webhookId,
        event: 'record.delete',
        collection: 'lost',
        record_id: null,
        status,
        payload: JSON.stringify({ id }),
        attempts,
        attempt_log: JSON.stringify(
          Array.from({ length: attempts }, (_, i) => ({
            attempt: i + 1,
            at: 1,
            status: 503,
            durationMs: 1,
            error: 'http_503',
          })),
        ),
        response_status: attempts ? 503 : null,
        duration_ms: null,
        error: attempts ? 'http_503' : null,
        created_at: 1,
        updated_at: 1,
      })
      // Rows with no job behind them, as a lost job leaves them: nothing delivers them until a start.
      await server.app.registry.system.db
        .insertInto('webhook_deliveries')
        .values([row('a'.repeat(32), 'pending', 0), row('b'.repeat(32), 'retrying', 2)])
        .execute()
      server = await server.restart()
      const list = await until(
        async () =>
          (await server.request('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token: owner.token })).body
            .data as any[],
        (rows) => rows.length === 2 && rows.every((d) => d.status === 'success'),
        'both deliveries',
      )
      const byId = new Map(
        list.map((d) => [d.id, d.attemptLog.map((a: { attempt: number; status: number }) => [a.attempt, a.status])]),
      )
      expect(byId.get('a'.repeat(32))).toEqual([[1, 200]])
      expect(byId.get('b'.repeat(32))).toEqual([
        [1, 503],
        [2, 503],
        [3, 200],
      ])
      expect([receiver.acked.get('a'.repeat(32)), receiver.acked.get('b'.repeat(32))]).toEqual([1, 1])
    } finally {
      await server.stop()
      await receiver.close()
    }
  })
})
