import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import {
  startHostileServer,
  tableResolver,
  type HostileBehaviour,
  type HostileServer,
} from '../../src/lib/outbound/test-servers.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd } from './automate-support.js'
import { createCollection, createRecord, field, uniqueName } from './collections-support.js'

/**
 * Outbound answers that never end or are huge (issue 25, deliver item 5), over real HTTP: a flow's
 * http_request and webhook_dispatch, a script's fetch and a collection webhook's delivery, each against a
 * server that never answers, sends a head that never completes, trickles a body byte by byte, or sends an
 * endless, a 4 GiB, an unframed or a decompressing-without-end body. Each ends with a named code (timed_out
 * when time ran out, too_large when the size did) and the server's resident memory stays bounded.
 *
 * Memory: the server runs in this process, so its RSS is sampled every 5 ms while each request is out; the
 * growth over the RSS before it must stay under MAX_GROWTH_MB. The bodies are refused at 10 MiB (1 MiB for
 * deliveries and scripts) and the hostile server writes only as fast as it is read, so an unguarded client
 * would buffer the whole stream: at loopback speed, gigabytes within the timeout.
 *
 * ALLOW_PRIVATE_NETWORK is off; `hostile.test` (127.0.0.1) is the one host let through (lib/outbound's test hooks).
 */

/** The most the server's RSS may grow while one request is out: the 10 MiB body limit, decoder buffers, and room for the GC's timing. */
const MAX_GROWTH_MB = 64
const TIMEOUT_MS = 1000

let hostile: HostileServer
let server: TestServer
let owner: Account
let base: string

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })

/** Runs `work` while sampling the process's RSS; answers its value and the peak growth over the RSS before it, in MB. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; growthMb: number }> {
  const before = process.memoryUsage.rss()
  let peak = before
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5)
  try {
    const value = await work()
    peak = Math.max(peak, process.memoryUsage.rss())
    return { value, growthMb: (peak - before) / (1024 * 1024) }
  } finally {
    clearInterval(sample)
  }
}

async function runOf(operations: unknown[]): Promise<any> {
  const flowId = await activeFlow(call, uniqueName('outbound'), operations)
  return executeToEnd(call, call, flowId)
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

beforeAll(async () => {
  hostile = await startHostileServer()
  const resolve = tableResolver({ 'hostile.test': ['127.0.0.1'] })
  server = await startServer(
    {},
    {
      outbound: { resolve, isBlocked: (address, host) => host !== 'hostile.test' && isBlockedAddress(address) },
      // One attempt: a timeout is retried otherwise, and the test waits for the outcome of this one.
      webhookDelivery: { attempts: 1, backoffMs: 1, timeoutMs: TIMEOUT_MS },
    },
  )
  owner = await signUpOwner(server)
  base = `http://hostile.test:${hostile.port}`
  // What the first use of each surface costs once (a script worker and its WebAssembly, the queue) is not what is measured.
  const warm = await runOf([
    { key: 'get', type: 'http_request', config: { url: `${base}/warm/ok` } },
    { key: 'notify', type: 'webhook_dispatch', config: { url: `${base}/warm/ok`, payload: {} } },
    {
      key: 'script',
      type: 'run_script',
      config: {
        code: `return (await fetch(${JSON.stringify(`${base}/warm/ok`)})).status`,
        allowed_domains: ['hostile.test'],
      },
    },
  ])
  expect(warm.status, JSON.stringify(warm)).toBe('completed')
})
afterAll(async () => {
  await server?.stop()
  await hostile?.close()
})

const cases: { behaviour: HostileBehaviour; what: string; code: 'timed_out' | 'too_large' }[] = [
  { behaviour: 'hang', what: 'never sends a status line or headers', code: 'timed_out' },
  { behaviour: 'slow-head', what: 'sends its headers a byte at a time, never completing them', code: 'timed_out' },
  { behaviour: 'trickle', what: 'sends headers, then a body byte every 50 ms forever', code: 'timed_out' },
  { behaviour: 'endless', what: 'sends a chunked body that never ends', code: 'too_large' },
  { behaviour: 'huge', what: 'declares a 4 GiB body and sends it', code: 'too_large' },
  { behaviour: 'unframed', what: 'sends a body delimited by the connection end that never ends', code: 'too_large' },
  {
    behaviour: 'gzip-bomb',
    what: 'sends a gzip body that decodes without end (16 MiB of zeros per 16 KB, repeated)',
    code: 'too_large',
  },
]

describe.each(cases)('a server that $what', ({ behaviour, code }) => {
  it(`http_request fails with ${code}, memory bounded`, async () => {
    const { value: run, growthMb } = await measured(() =>
      runOf([
        {
          key: 'get',
          type: 'http_request',
          config: { url: `${base}/http/${behaviour}`, responseType: 'text', timeout_ms: TIMEOUT_MS },
        },
      ]),
    )
    expect(run.status, JSON.stringify(run.error)).toBe('failed')
    expect(run.error).toMatchObject({ code, step: 'get' })
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })

  it(`webhook_dispatch fails with ${code}, memory bounded`, async () => {
    const { value: run, growthMb } = await measured(() =>
      runOf([
        {
          key: 'notify',
          type: 'webhook_dispatch',
          config: {
            url: `${base}/dispatch/${behaviour}`,
            payload: { n: 1 },
            secret: 'dispatch-secret',
            timeout_ms: TIMEOUT_MS,
          },
        },
      ]),
    )
    expect(run.status, JSON.stringify(run.error)).toBe('failed')
    expect(run.error).toMatchObject({ code, step: 'notify' })
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })

  it(`a script's fetch is refused (${code === 'timed_out' ? 'timeout' : code}), memory bounded`, async () => {
    // The fetch's time is what is left of the script's: whichever ends first, the run names a timeout.
    const code = `try { await fetch(${JSON.stringify(`${base}/script/${behaviour}`)}); return { code: 'none' } } catch (e) { return { code: e.code } }`
    const { value: run, growthMb } = await measured(() =>
      runOf([
        {
          key: 'script',
          type: 'run_script',
          config: { code, allowed_domains: ['hostile.test'], timeout_ms: 2 * TIMEOUT_MS },
        },
      ]),
    )
    const [log] = run.stepLogs
    if (cases.find((c) => c.behaviour === behaviour)!.code === 'timed_out') {
      const outcome = run.status === 'completed' ? log.output.output.code : run.error.code
      expect(['timeout', 'script_timeout'], JSON.stringify(run)).toContain(outcome)
    } else {
      expect(run.status, JSON.stringify(run.error)).toBe('completed')
      expect(log.output.output).toEqual({ code: 'too_large' })
    }
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })

  it(`a collection webhook's delivery fails with ${code}, memory bounded`, async () => {
    const name = uniqueName('hostile')
    await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
    const made = await call('POST', '/api/v1/webhooks', {
      collection: name,
      events: ['record.create'],
      url: `${base}/delivery/${behaviour}`,
      secret: 'delivery-secret',
    })
    expect(made.status, made.text).toBe(201)
    const { value: list, growthMb } = await measured(async () => {
      await createRecord(server, owner.token, name, { title: 'x' })
      return until(
        async () => (await call('GET', `/api/v1/webhooks/${made.body.data.id}/deliveries`)).body.data as any[],
        (rows) => rows.length === 1 && rows[0].status === 'failed',
        'the delivery to fail',
      )
    })
    expect(list[0]).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, error: code })
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })
})

describe('nothing is left holding a connection', () => {
  it('every hostile connection has been closed by the client', async () => {
    await until(
      async () => hostile.open(),
      (open) => open === 0,
      'the client to close every connection',
    )
  })
})
