import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { createApp, type Plinth } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { listen } from '../../src/http/server.js'
import { freePort, send, type Reply, type TestServer } from '../support/harness.js'
import { createTestDatabase, testDatabaseUrl } from '../support/postgres.js'

/** Helpers the structure and field-options API tests share. */

/** The structure of `places.meta` most tests use: a list of enums, a number, an enum, a map, under an object. */
export const placeShape = {
  type: 'object',
  entries: {
    biome: {
      type: 'list',
      label: { en: 'Biomes', de: 'Biome' },
      items: {
        type: 'enum',
        values: [{ value: 'Forest', label: { en: 'Forest', de: 'Wald' } }, { value: 'Desert', label: 'Desert' }, 'Tundra'],
      },
    },
    size: { type: 'number' },
    kind: { type: 'enum', values: ['city', 'village'] },
    scores: { type: 'map', keys: { type: 'enum', values: ['red', 'green'] }, values: { type: 'number' } },
  },
}

export const structurePath = (collection: string, field: string, tail: string) => `/api/v1/collections/${collection}/fields/${field}/${tail}`

/** Polls a job until it leaves `running` (each poll is one request; no timing is asserted). */
export async function settle(server: TestServer, token: string, collection: string, kind: 'scan' | 'repair', jobId: string): Promise<Record<string, any>> {
  for (let i = 0; i < 2000; i++) {
    const reply = await server.request('GET', `/api/v1/collections/${collection}/${kind}-jobs/${jobId}`, { token })
    expect(reply.status, reply.text).toBe(200)
    if (reply.body.data.status !== 'running') return reply.body.data
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`job ${jobId} still running`)
}

/** Starts a scan job and waits for its end. */
export async function scanJob(server: TestServer, token: string, collection: string, field: string): Promise<Record<string, any>> {
  const started = await server.request('POST', structurePath(collection, field, 'scan-jobs'), { token })
  expect(started.status, started.text).toBe(202)
  return settle(server, token, collection, 'scan', started.body.data.jobId)
}

/** Every batch of a cursor scan, in order. */
export async function scanAll(server: TestServer, token: string, collection: string, field: string, limit = 200): Promise<Reply[]> {
  const pages: Reply[] = []
  let cursor: string | null = null
  do {
    const query: string = cursor === null ? `?limit=${limit}` : `?limit=${limit}&cursor=${encodeURIComponent(cursor)}`
    const reply = await server.request('GET', `${structurePath(collection, field, 'scan')}${query}`, { token })
    expect(reply.status, reply.text).toBe(200)
    pages.push(reply)
    cursor = reply.body.data.nextCursor
    if (pages.length > 1000) throw new Error('scan does not end')
  } while (cursor !== null)
  return pages
}

/** A gate the test opens batch by batch: background structure jobs wait on it before every batch. */
export function createGate() {
  let open = true
  let waiting: (() => void)[] = []
  let arrivals: (() => void)[] = []
  return {
    pace: () => {
      if (open) return new Promise<void>((resolve) => setImmediate(resolve))
      const arrived = arrivals
      arrivals = []
      arrived.forEach((resolve) => resolve())
      return new Promise<void>((resolve) => waiting.push(resolve))
    },
    close() {
      open = false
    },
    /** Resolves once a batch waits at the (closed) gate. */
    arrival(): Promise<void> {
      if (waiting.length > 0) return Promise.resolve()
      return new Promise<void>((resolve) => arrivals.push(resolve))
    },
    /** Lets the waiting batches go and keeps the gate open. */
    release() {
      open = true
      const go = waiting
      waiting = []
      go.forEach((resolve) => resolve())
    },
    /** Lets the waiting batches go, one step each, and keeps the gate closed. */
    step() {
      const go = waiting
      waiting = []
      go.forEach((resolve) => resolve())
    },
  }
}

/**
 * A server like the harness's, with a job pace of the test's own (the harness passes no app options).
 * Same DATA_DIR, PostgreSQL and settings rules as test/support/harness.ts.
 */
export async function startPacedServer(pace: () => Promise<void>): Promise<TestServer> {
  const adminUrl = testDatabaseUrl()
  const database = adminUrl ? await createTestDatabase(adminUrl) : null
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-test-'))
  const logs: string[] = []
  const port = await freePort()
  let app: Plinth | undefined
  try {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      PASSWORD_HASH_ITERATIONS: '1000',
      AUTH_RATE_LIMIT: '10000',
      ...(database ? { DATABASE_URL: database.url, SECRET_KEY: randomBytes(32).toString('hex') } : {}),
    })
    app = await createApp(config, { logDestination: { write: (line: string) => void logs.push(line) }, structureJobPace: pace })
    const running = await listen(app.fetch, { host: '127.0.0.1', port, log: app.log, access: app.access })
    const started = app
    return {
      url: running.url,
      app: started,
      dataDir,
      logs,
      request: (method, path, options) => send(running.url, method, path, options),
      async stop() {
        await running.stop(1000)
        await started.close()
        await database?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } catch (err) {
    await app?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
}
