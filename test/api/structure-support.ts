import { expect } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'

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
        values: [
          { value: 'Forest', label: { en: 'Forest', de: 'Wald' } },
          { value: 'Desert', label: 'Desert' },
          'Tundra',
        ],
      },
    },
    size: { type: 'number' },
    kind: { type: 'enum', values: ['city', 'village'] },
    scores: { type: 'map', keys: { type: 'enum', values: ['red', 'green'] }, values: { type: 'number' } },
  },
}

export const structurePath = (collection: string, field: string, tail: string) =>
  `/api/v1/collections/${collection}/fields/${field}/${tail}`

/** Polls a job until it leaves `running` (each poll is one request; no timing is asserted). */
export async function settle(
  server: TestServer,
  token: string,
  collection: string,
  kind: 'scan' | 'repair',
  jobId: string,
): Promise<Record<string, any>> {
  for (let i = 0; i < 2000; i++) {
    const reply = await server.request('GET', `/api/v1/collections/${collection}/${kind}-jobs/${jobId}`, { token })
    expect(reply.status, reply.text).toBe(200)
    if (reply.body.data.status !== 'running') return reply.body.data
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`job ${jobId} still running`)
}

/** Starts a scan job and waits for its end. */
export async function scanJob(
  server: TestServer,
  token: string,
  collection: string,
  field: string,
): Promise<Record<string, any>> {
  const started = await server.request('POST', structurePath(collection, field, 'scan-jobs'), { token })
  expect(started.status, started.text).toBe(202)
  return settle(server, token, collection, 'scan', started.body.data.jobId)
}

/** Every batch of a cursor scan, in order. */
export async function scanAll(
  server: TestServer,
  token: string,
  collection: string,
  field: string,
  limit = 200,
): Promise<Reply[]> {
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

/** The harness's server, with a structure job pace of the test's own. */
export function startPacedServer(pace: () => Promise<void>): Promise<TestServer> {
  return startServer({}, { structureJobPace: pace })
}
