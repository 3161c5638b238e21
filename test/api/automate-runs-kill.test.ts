import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { send, type Reply } from '../support/harness.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'
import { kill, serve, type Running } from '../support/serve-process.js'

/**
 * What a SIGKILL does to runs a caller was told 202 for (issue 26; decision 054), with real `plinth serve`
 * processes: webhook runs accepted and waiting (in a delay, or for a concurrency place) complete after the
 * restart, each writing its record exactly once; a run killed inside a step that writes (an http_request
 * held open by the receiver) ends `interrupted` naming that step, and its retry completes. Embedded
 * (SQLite, or PostgreSQL when TEST_DATABASE_URL is set) the restarted process takes every run over at
 * start; on PostgreSQL + Redis (scale-out) a run is taken over once its lease lapsed (RUN_LEASE_SECONDS
 * 5 here), and a second test kills instance A while B lives: B runs what A accepted.
 */
const BASE = '/api/v1/automate'
const ACCEPTED = 40
const redisUrl = process.env.TEST_REDIS_URL

type Request = (method: string, path: string, body?: unknown, token?: string) => Promise<Reply>

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`never happened: ${what}: ${JSON.stringify(value).slice(0, 2000)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const done = await reply
  expect(done.status, done.text).toBe(status)
  return done.body
}

/** A receiver that holds each request open until `fast` (what a step that writes looks like while it waits). */
async function receiver() {
  const held: ServerResponse[] = []
  const state = { fast: false, hits: 0 }
  const server: Server = createServer((req, res) => {
    state.hits++
    if (state.fast) return void res.end('{"ok":true}')
    held.push(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    state,
    async close() {
      for (const res of held) res.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Signs up, makes `orders`, and the two webhook flows: `accept` (3 s delay, then a record) and `slow` (an http_request held open). */
async function setUp(request: Request, slowUrl: string) {
  const signUp = await ok(
    request('POST', '/api/auth/sign-up/email', { email: 'kill@example.com', password: 'kill password', name: 'K' }),
  )
  const token = signUp.token as string
  await ok(
    request(
      'POST',
      '/api/v1/collections',
      { name: 'orders', fields: [{ name: 'ref', type: 'text', required: false }] },
      token,
    ),
    201,
  )
  // 20 at once in the project, every flow parallel: the 40 runs are running (in their delay) or waiting for a place.
  await ok(request('PATCH', `${BASE}/quotas`, { maxConcurrentRuns: 20 }, token))
  const flow = async (name: string, operations: unknown[], runAs?: string) => {
    const id = (
      await ok(
        request(
          'POST',
          `${BASE}/flows`,
          { name, triggerType: 'webhook', triggerConfig: {}, operations, options: { concurrency: 'parallel' } },
          token,
        ),
        201,
      )
    ).data.id as string
    if (runAs) await ok(request('PATCH', `${BASE}/flows/${id}`, { runAs }, token))
    await ok(request('POST', `${BASE}/flows/${id}/publish`, { changeSummary: 'v1' }, token))
    const detail = await ok(request('PATCH', `${BASE}/flows/${id}/status`, { status: 'active' }, token))
    return { id, hook: `${BASE}/webhook/${detail.data.webhookEndpoint.token as string}` }
  }
  const accept = await flow(
    'Accept orders',
    [
      { key: 'wait', type: 'delay', config: { ms: 3000 } },
      { key: 'save', type: 'crud_create', config: { collection: 'orders', data: { ref: '{{$trigger.body.ref}}' } } },
    ],
    'flow_owner',
  )
  const slow = await flow('Call out', [{ key: 'call', type: 'http_request', config: { url: slowUrl, method: 'POST' } }])
  return { token, accept, slow }
}

/** Accepts the webhook calls (every one 202) and the held call; answers the run ids once the held call reached the receiver. */
async function acceptCalls(request: Request, flows: Awaited<ReturnType<typeof setUp>>, hits: () => number) {
  const held = (await ok(request('POST', flows.slow.hook, {}), 202)).runId as string
  const accepted = await Promise.all(
    Array.from(
      { length: ACCEPTED },
      async (_, i) => (await ok(request('POST', flows.accept.hook, { ref: `r${i}` }), 202)).runId as string,
    ),
  )
  await until(
    async () => hits(),
    (n) => n >= 1,
    'the held call to reach the receiver',
    20_000,
  )
  return { held, accepted }
}

/** After the restart (or on the survivor): every accepted run completed, each record written once; the held run interrupted, and its retry completes. */
async function verify(
  request: Request,
  flows: Awaited<ReturnType<typeof setUp>>,
  runs: { held: string; accepted: string[] },
  makeFast: () => void,
) {
  const signIn = await ok(
    request('POST', '/api/auth/sign-in/email', { email: 'kill@example.com', password: 'kill password' }),
  )
  const token = signIn.token as string
  const page = await until(
    async () =>
      (await ok(request('GET', `${BASE}/flows/${flows.accept.id}/runs?limit=100`, undefined, token))).data as {
        runId: string
        status: string
      }[],
    (rows) => rows.length === ACCEPTED && rows.every((r) => r.status !== 'pending' && r.status !== 'running'),
    'every accepted run to end',
  )
  expect(page.map((r) => r.runId).sort()).toEqual([...runs.accepted].sort())
  expect(page.filter((r) => r.status !== 'completed')).toEqual([])
  const records = (await ok(request('GET', '/api/v1/collections/orders/records?limit=100', undefined, token))).data as {
    ref: string
  }[]
  expect(records.map((r) => r.ref).sort()).toEqual(Array.from({ length: ACCEPTED }, (_, i) => `r${i}`).sort())

  const interrupted = await until(
    async () => (await ok(request('GET', `${BASE}/runs/${runs.held}`, undefined, token))).data,
    (r) => r.status !== 'running' && r.status !== 'pending',
    'the held run to end',
  )
  expect(interrupted).toMatchObject({ status: 'failed', error: { code: 'interrupted', step: 'call' } })
  expect(interrupted.error.message).toMatch(/during step "call", which writes/)
  makeFast()
  const retried = (await ok(request('POST', `${BASE}/runs/${runs.held}/retry`, undefined, token), 202)).data
    .runId as string
  const done = await until(
    async () => (await ok(request('GET', `${BASE}/runs/${retried}`, undefined, token))).data,
    (r) => r.status !== 'running' && r.status !== 'pending',
    'the retry to end',
  )
  expect(done).toMatchObject({ status: 'completed', retryOf: runs.held })
}

function requestOn(running: () => Running): Request {
  return (method, path, body, token) =>
    send(running().url, method, path, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) })
}

describe('SIGKILL with accepted webhook runs, then a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-kill-runs-'))
  let database: { url: string; drop: () => Promise<void> } | null = null
  let running: Running | null = null
  let slow: Awaited<ReturnType<typeof receiver>> | null = null

  afterAll(async () => {
    if (running) await kill(running)
    await slow?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('every accepted run completes once, a run inside a write ends interrupted and its retry completes', {
    timeout: 180_000,
  }, async () => {
    if (testDatabaseUrl()) database = await createTestDatabase(testDatabaseUrl()!)
    slow = await receiver()
    const env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      PASSWORD_HASH_ITERATIONS: '1000',
      ALLOW_PRIVATE_NETWORK: 'true',
      RUN_LEASE_SECONDS: '5',
      ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
      ...(database && redisUrl
        ? { REDIS_URL: redisUrl, REDIS_PREFIX: `plinth-kill:${randomBytes(6).toString('hex')}:` }
        : {}),
    }
    running = await serve(env)
    const request = requestOn(() => running!)
    const flows = await setUp(request, slow.url)
    const runs = await acceptCalls(request, flows, () => slow!.state.hits)
    await kill(running)
    running = await serve(env)
    try {
      await verify(request, flows, runs, () => (slow!.state.fast = true))
    } catch (err) {
      // What the restarted server said about the runs (its request lines left out), to see why.
      console.log(
        running
          .output()
          .split('\n')
          .filter((l) => !l.includes('"msg":"request"'))
          .slice(0, 60)
          .join('\n'),
      )
      throw err
    }
  })
})

describe.runIf(testDatabaseUrl() && redisUrl)(
  'two instances on PostgreSQL + Redis: A accepts runs and is killed',
  () => {
    let database: { url: string; drop: () => Promise<void> } | null = null
    const dirs = [mkdtempSync(join(tmpdir(), 'plinth-kill-a-')), mkdtempSync(join(tmpdir(), 'plinth-kill-b-'))]
    const instances: Running[] = []
    let slow: Awaited<ReturnType<typeof receiver>> | null = null

    afterAll(async () => {
      for (const running of instances) await kill(running)
      await slow?.close()
      await database?.drop()
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
    })

    it('B runs every run A accepted (each record once) and ends the one A was inside a write interrupted', {
      timeout: 180_000,
    }, async () => {
      database = await createTestDatabase(testDatabaseUrl()!)
      slow = await receiver()
      const shared = {
        HOST: '127.0.0.1',
        PORT: '0',
        PASSWORD_HASH_ITERATIONS: '1000',
        ALLOW_PRIVATE_NETWORK: 'true',
        RUN_LEASE_SECONDS: '5',
        DATABASE_URL: database.url,
        SECRET_KEY: randomBytes(32).toString('hex'),
        REDIS_URL: redisUrl!,
        REDIS_PREFIX: `plinth-kill2:${randomBytes(6).toString('hex')}:`,
      }
      const a = await serve({ ...shared, DATA_DIR: dirs[0]! })
      instances.push(a)
      const b = await serve({ ...shared, DATA_DIR: dirs[1]! })
      instances.push(b)
      const flows = await setUp(
        requestOn(() => a),
        slow.url,
      )
      const runs = await acceptCalls(
        requestOn(() => a),
        flows,
        () => slow!.state.hits,
      )
      await kill(a)
      await verify(
        requestOn(() => b),
        flows,
        runs,
        () => (slow!.state.fast = true),
      )
    })
  },
)
