import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { tableResolver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd } from './automate-support.js'

/**
 * JSON that is small as text and huge in memory (issue 25: memory stays bounded). 9.7 MB of `[[],[],…]` is
 * 3.2 million empty arrays: parsed, it grew the server by about 440 MB, under the 10 MiB body limits. Now a
 * JSON text holds at most a million values (lib/json-bounds), wherever a caller can make the server parse it:
 * an outbound response a flow reads, and a request body. The server runs in this process: its RSS is
 * sampled while each request is out, and may grow by at most MAX_GROWTH_MB (the text itself, its string
 * copies and the GC's timing; an unguarded parse grows it by hundreds of MB).
 */
const MAX_GROWTH_MB = 120
const bomb = `[${'[],'.repeat(3_200_000)}[]]`
let target: Server
let targetPort: number
let server: TestServer
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })

async function measured<T>(work: () => Promise<T>): Promise<{ value: T; growthMb: number }> {
  global.gc?.()
  const before = process.memoryUsage.rss()
  let peak = before
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5)
  try {
    const value = await work()
    return { value, growthMb: (Math.max(peak, process.memoryUsage.rss()) - before) / (1024 * 1024) }
  } finally {
    clearInterval(sample)
  }
}

beforeAll(async () => {
  target = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(bomb))
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  targetPort = (target.address() as AddressInfo).port
  const resolve = tableResolver({ 'bomb.test': ['127.0.0.1'] })
  server = await startServer(
    {},
    { outbound: { resolve, isBlocked: (address, host) => host !== 'bomb.test' && isBlockedAddress(address) } },
  )
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
  await new Promise((resolve) => target?.close(resolve))
})

describe('JSON with more values than memory should hold', () => {
  it('an http_request reading it as JSON fails too_large instead of building it', async () => {
    const flowId = await activeFlow(call, 'Bomb', [
      { key: 'fetch', type: 'http_request', config: { url: `http://bomb.test:${targetPort}/`, method: 'GET' } },
    ])
    const { value: run, growthMb } = await measured(() => executeToEnd(call, call, flowId))
    expect(run.status).toBe('failed')
    expect(run.stepLogs[0]).toMatchObject({ status: 'failed', error: { code: 'too_large' } })
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })

  it('a request body holding it is 413 before any route parses it, the webhook trigger’s included', async () => {
    const flow = await call('POST', '/api/v1/automate/flows', {
      name: 'Hook',
      triggerType: 'webhook',
      triggerConfig: {},
      operations: [{ key: 'hi', type: 'log', config: { message: 'hi' } }],
    })
    const { value: replies, growthMb } = await measured(async () => [
      await server.request('POST', '/api/v1/collections', {
        token: owner.token,
        rawBody: bomb,
        headers: { 'content-type': 'application/json' },
      }),
      await server.request('POST', `/api/v1/automate/webhook/${flow.body.data.webhookEndpoint.token}`, {
        rawBody: bomb,
        headers: { 'content-type': 'application/json' },
      }),
    ])
    for (const reply of replies)
      expect(reply.body, reply.text.slice(0, 200)).toMatchObject({
        error: 'payload_too_large',
        details: { limit: 1_000_000 },
      })
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB)
  })
})
