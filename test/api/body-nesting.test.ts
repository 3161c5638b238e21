import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * A JSON body nested past 256 levels (lib/json-bounds maxJsonNesting) is refused before any route reads
 * it: JSON.parse takes any depth, but writing such a value back (a run's trigger payload, a record's JSON
 * field) overflows the stack, which answered 500 where it was written. Built as text: JSON.stringify of
 * the value itself would overflow here too.
 */

const BASE = '/api/v1/automate'
const deep = (levels: number, leaf = '1') => `${'{"a":['.repeat(levels)}${leaf}${']}'.repeat(levels)}`

let server: TestServer
let owner: Account
let manualFlow: string
let webhookToken: string

const send = (
  method: string,
  path: string,
  rawBody: string,
  token: string | undefined = owner.token,
  type = 'application/json',
): Promise<Reply> => server.request(method, path, { token, rawBody, headers: { 'content-type': type } })
const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })
const runCount = async (flowId: string) =>
  (await call('GET', `${BASE}/flows/${flowId}/runs?limit=100`)).body.total as number
const records = async () =>
  (await call('GET', '/api/v1/collections/things/records?limit=100')).body.data as { id: string }[]

async function activeFlow(flow: Record<string, unknown>): Promise<string> {
  const created = await call('POST', `${BASE}/flows`, {
    name: 'Nesting',
    triggerConfig: {},
    operations: [{ key: 'a', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body}}' } }],
    ...flow,
  })
  expect(created.status, created.text).toBe(201)
  expect((await call('POST', `${BASE}/flows/${created.body.data.id}/publish`, { changeSummary: 'v1' })).status).toBe(
    200,
  )
  expect((await call('PATCH', `${BASE}/flows/${created.body.data.id}/status`, { status: 'active' })).status).toBe(200)
  return created.body.data.id
}

function refused(reply: Reply): void {
  expect(reply.status, reply.text.slice(0, 300)).toBe(400)
  expect(reply.body).toEqual({
    error: 'invalid_request',
    message: 'Request body nests deeper than 256 levels',
    details: { limit: 256 },
  })
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const made = await call('POST', '/api/v1/collections', {
    name: 'things',
    fields: [{ name: 'meta', type: 'json', required: false }],
  })
  expect(made.status, made.text).toBe(201)
  manualFlow = await activeFlow({ triggerType: 'manual' })
  const hook = await activeFlow({ triggerType: 'webhook', triggerConfig: { allowed_methods: ['POST'] } })
  webhookToken = (await call('GET', `${BASE}/flows/${hook}`)).body.data.webhookEndpoint.token
})
afterAll(async () => {
  await server?.stop()
})

describe('a JSON body nested 5,000 and 50,000 levels deep', () => {
  it.each([5_000, 50_000])('%i levels: execute and webhook are 400, and no run is made', async (levels) => {
    const before = await runCount(manualFlow)
    refused(await send('POST', `${BASE}/flows/${manualFlow}/execute`, deep(levels)))
    refused(await send('POST', `${BASE}/webhook/${webhookToken}`, deep(levels), undefined))
    expect(await runCount(manualFlow)).toBe(before)
    expect((await server.request('GET', '/health')).status).toBe(200)
  })

  it.each([5_000, 50_000])(
    '%i levels: a record with that JSON field, one by one or imported, is 400, and nothing is stored',
    async (levels) => {
      refused(await send('POST', '/api/v1/collections/things/records', `{"meta":${deep(levels)}}`))
      refused(
        await send(
          'POST',
          '/api/v1/collections/things/records/import-ndjson',
          `{"meta":1}\n{"meta":${deep(levels)}}\n`,
          owner.token,
          'application/x-ndjson',
        ),
      )
      expect(await records()).toEqual([])
      // (The field's own 64-level bound refused these too, as invalid_field; the body bound now comes first.)
    },
  )
})

describe('within the bound', () => {
  it('a run takes a payload 240 containers deep, and its step writes it back', async () => {
    const run = await send('POST', `${BASE}/flows/${manualFlow}/execute`, deep(120))
    expect(run.status, run.text.slice(0, 300)).toBe(202)
    let detail: Reply | undefined
    for (let i = 0; i < 100; i++) {
      detail = await call('GET', `${BASE}/runs/${run.body.data.runId}`)
      if (detail.body.data.status === 'completed') break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(detail?.body.data.status, detail?.text.slice(0, 300)).toBe('completed')
  })

  it('a record JSON field keeps its own bound (64 levels, docs/records.md) under the body bound', async () => {
    const created = await send('POST', '/api/v1/collections/things/records', `{"meta":${deep(30)}}`)
    expect(created.status, created.text.slice(0, 300)).toBe(201)
    const read = await call('GET', `/api/v1/collections/things/records/${created.body.id}`)
    expect(read.status, read.text.slice(0, 200)).toBe(200)
    expect(JSON.stringify(read.body.meta ?? read.body.data?.meta)).toBe(deep(30))
    const over = await send('POST', '/api/v1/collections/things/records', `{"meta":${deep(100)}}`)
    expect(over.status).toBe(400)
    expect(over.body.error).toBe('invalid_field')
  })

  it('brackets inside strings do not count', async () => {
    const created = await send(
      'POST',
      '/api/v1/collections/things/records',
      `{"meta":{"text":"${'[{'.repeat(2_000)}"}}`,
    )
    expect(created.status, created.text.slice(0, 300)).toBe(201)
  })
})
