import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp, type AppOptions, type Plinth } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { listen, type RunningServer } from '../../src/http/server.js'
import { createTestDatabase, testDatabaseUrl } from './postgres.js'

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any
}

export interface RequestOptions {
  body?: unknown
  rawBody?: string | Uint8Array
  headers?: Record<string, string>
  token?: string
}

export interface TestServer {
  readonly url: string
  readonly app: Plinth
  readonly dataDir: string
  /** Every log line written so far, raw. */
  readonly logs: string[]
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>
  stop(): Promise<void>
  /**
   * Stops this instance without cleaning up and starts a new one on the same DATA_DIR, database and
   * settings (a new port): what a restart after a crash sees. Use the returned server from then on.
   */
  restart(): Promise<TestServer>
}

/**
 * Boots the real app on a free port with a fresh DATA_DIR, and, when TEST_DATABASE_URL is set, a fresh
 * PostgreSQL database (and, with TEST_REDIS_URL, Redis under a prefix of its own). Requests go over real HTTP.
 */
export async function startServer(env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestServer> {
  const adminUrl = testDatabaseUrl()
  const database = adminUrl ? await createTestDatabase(adminUrl) : null
  const shared = {
    ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
    ...(process.env.TEST_REDIS_URL
      ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_PREFIX: `plinth-test:${randomBytes(6).toString('hex')}:` }
      : {}),
  }
  return boot({ ...shared, ...env }, async () => database?.drop(), options)
}

/** App options a test may pass (storage faults, realtime tuning, structure job pacing); logs are always captured. */
export type TestAppOptions = Omit<AppOptions, 'logDestination'>

/**
 * Boots one instance with these settings on top of the test defaults; `cleanup` runs after it stops (or
 * fails to start). Every instance gets its own port and captured log, and its own DATA_DIR unless `dataDir`
 * names one (a restart).
 */
export async function boot(
  env: Record<string, string>,
  cleanup: () => Promise<void> = async () => {},
  options: TestAppOptions = {},
  dataDir = mkdtempSync(join(tmpdir(), 'plinth-test-')),
): Promise<TestServer> {
  const logs: string[] = []
  for (let attempt = 1; ; attempt++) {
    try {
      return await bootOnce(env, cleanup, options, dataDir, logs)
    } catch (err) {
      // Another test took the port between the probe and the bind: start again on a new one.
      if (attempt < 3 && (err as { cause?: { code?: string } }).cause?.code === 'EADDRINUSE') continue
      await cleanup()
      rmSync(dataDir, { recursive: true, force: true })
      throw err
    }
  }
}

async function bootOnce(
  env: Record<string, string>,
  cleanup: () => Promise<void>,
  options: TestAppOptions,
  dataDir: string,
  logs: string[],
): Promise<TestServer> {
  let app: Plinth | undefined
  let running: RunningServer | undefined
  try {
    // A known port before start-up, so PUBLIC_URL (mailed links, OAuth redirects) is the real address.
    const port = await freePort()
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // Fast hashing and a generous limit keep tests quick; tests of those features set their own.
      PASSWORD_HASH_ITERATIONS: '1000',
      AUTH_RATE_LIMIT: '10000',
      ...env,
    })
    app = await createApp(config, { ...options, logDestination: { write: (line: string) => void logs.push(line) } })
    running = await listen(app.fetch, {
      host: '127.0.0.1',
      port,
      log: app.log,
      access: app.access,
      observe: app.observeRequest,
    })
  } catch (err) {
    await app?.close()
    throw err
  }
  const url = running.url
  const started = { app, running }
  let stopped = false
  return {
    url,
    app,
    dataDir,
    logs,
    request: (method, path, options) => send(url, method, path, options),
    async stop() {
      if (stopped) return // idempotent: a test may stop its server, and its afterAll stop it again
      stopped = true
      await started.running.stop(1000)
      await started.app.close()
      await cleanup()
      rmSync(dataDir, { recursive: true, force: true })
    },
    async restart() {
      if (stopped) throw new Error('This server has stopped; restart the one that replaced it')
      stopped = true
      await started.running.stop(1000)
      await started.app.close()
      return boot(env, cleanup, options, dataDir)
    },
  }
}

/**
 * A free TCP port on loopback, closed again before it is returned. Chosen below the kernel's ephemeral range
 * (Linux 32768-60999, macOS 49152-65535): an ephemeral port can be taken by any outgoing connection (the
 * suite's own PostgreSQL and Redis clients) in the window before the server binds it, which made a CI run
 * fail with EADDRINUSE. The window against another test picking the same port remains; `boot` retries then.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await bindable(port)) return port
  }
  return ephemeralPort()
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
  })
}

function ephemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}
/** One HTTP request to a running server. */
export async function send(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | Uint8Array | undefined = options.rawBody
  if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  const res = await fetch(`${base}${path}`, { method, headers, body })
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed }
}
