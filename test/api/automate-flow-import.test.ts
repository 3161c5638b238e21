import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import { startTestServer, tableResolver, type TestServer as Receiver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { AUTOMATE, executeToEnd } from './automate-support.js'

/**
 * Flow import and credential masking (issue 26, decision 052) over real HTTP: the export's answer imports
 * as it is; a taken slug is 409 before anything else; a copy drops its masked credentials and says which
 * step and path need a value, and publish is refused (422) until they are given; credential headers
 * (X-Api-Key, Cookie, X-Auth-Token) appear in no reply — list, detail, versions, export, MCP, a run's step
 * log — while the receiving server gets them and a PATCH sending the mask back keeps them.
 */
const BASE = `${AUTOMATE}/flows`
const MASK = '\u2022'.repeat(8)
const secret = (label: string) => `${label}-${randomBytes(9).toString('hex')}`
const BEARER = secret('bearer')
const WEBHOOK_SECRET = secret('whsec')
const API_KEY = secret('apikey')
const COOKIE = `session=${secret('cookie')}`
const AUTH_TOKEN = secret('xauth')
const GQL_KEY = secret('gqlkey')
const HEADER_SECRETS = [API_KEY, COOKIE, AUTH_TOKEN, GQL_KEY]

let server: TestServer
let receiver: Receiver
let owner: Account
let readKey: string
let mcpKey: string
let base: string
/** Replies that must hold no credential. */
const replies: Reply[] = []

const request = async (
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => {
  const reply = await server.request(method, path, { token, body, ...(headers ? { headers } : {}) })
  // What must never hold a credential: exports, runs, MCP, and any read without system/automate:update.
  if (token !== owner.token || /\/export$|\/runs\/|\/mcp\//.test(path)) replies.push(reply)
  return reply
}
const call = (method: string, path: string, body?: unknown) => request(method, path, owner.token, body)
const asReader = (method: string, path: string) => request(method, path, readKey)

async function createFlow(body: Record<string, unknown>): Promise<any> {
  const reply = await call('POST', BASE, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}
const bearerFlow = (name: string) => ({
  name,
  triggerType: 'webhook',
  triggerConfig: { require_auth: true, secret: WEBHOOK_SECRET },
  operations: [
    {
      key: 'call',
      type: 'http_request',
      config: { url: 'https://example.com/api', auth: { type: 'bearer', token: BEARER } },
    },
  ],
})
const row = async (id: string): Promise<any> =>
  server.app.registry.system.db.selectFrom('flows').selectAll().where('id', '=', id).executeTakeFirst()

beforeAll(async () => {
  receiver = await startTestServer((req, res) => {
    if (req.path === '/graphql')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { ok: true } }))
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }))
  })
  const resolve = tableResolver({ 'receiver.test': ['127.0.0.1'] })
  server = await startServer(
    {},
    { outbound: { resolve, isBlocked: (address, host) => host !== 'receiver.test' && isBlockedAddress(address) } },
  )
  owner = await signUpOwner(server)
  base = `http://receiver.test:${receiver.port}`
  const key = await call('POST', '/api/auth/api-keys', { label: 'reader', capabilities: ['system/automate:read'] })
  expect(key.status, key.text).toBe(201)
  readKey = key.body.raw
  mcpKey = (await call('POST', '/api/auth/api-keys', { label: 'mcp', capabilities: ['system/automate:read'] })).body.raw
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

describe('import as the spec says', () => {
  it('a copy (slug removed) drops the masked credentials, says what needs a value; publish is 422 until given, then 200', async () => {
    const flow = await createFlow(bearerFlow('Bearer sync'))
    expect(flow.missingCredentials).toEqual([])
    const exported = await call('GET', `${BASE}/${flow.id}/export`)
    expect(exported.status, exported.text).toBe(200)
    const { slug: _slug, ...copy } = exported.body.data
    const imported = await call('POST', `${BASE}/import`, copy)
    expect(imported.status, imported.text).toBe(201)
    const id = imported.body.data.id as string
    const missing = [
      { step: 'call', path: 'config.auth.token' },
      { step: null, path: 'triggerConfig.secret' },
    ]
    expect(imported.body.data).toMatchObject({ status: 'draft', slug: 'bearer-sync-2', missingCredentials: missing })
    expect((await call('GET', `${BASE}/${id}`)).body.data.missingCredentials).toEqual(missing)
    expect((await row(id)).operations).not.toContain(MASK)

    const refused = await call('POST', `${BASE}/${id}/publish`, { changeSummary: 'too soon' })
    expect(refused.status, refused.text).toBe(422)
    expect(refused.body.error).toBe('validation_error')
    expect(refused.body.message).toContain("step 'call' config.auth.token")
    expect(refused.body.details.missingCredentials).toEqual(missing)
    expect((await row(id)).published_version).toBeNull()

    // Given one at a time: the detail follows, publish waits for the last.
    const operations = [
      {
        key: 'call',
        type: 'http_request',
        config: { url: 'https://example.com/api', auth: { type: 'bearer', token: 'a fresh token' } },
      },
    ]
    const patched = await call('PATCH', `${BASE}/${id}`, { operations })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data.missingCredentials).toEqual([{ step: null, path: 'triggerConfig.secret' }])
    expect((await call('POST', `${BASE}/${id}/publish`, {})).status).toBe(422)
    const done = await call('PATCH', `${BASE}/${id}`, {
      triggerConfig: { require_auth: true, secret: 'a fresh secret' },
    })
    expect(done.body.data.missingCredentials).toEqual([])
    const published = await call('POST', `${BASE}/${id}/publish`, { changeSummary: 'complete' })
    expect(published.status, published.text).toBe(200)
    expect(published.body.data.version).toBe(1)
  })

  it('create and PATCH follow the same rule: a mask with nothing stored is dropped and reported', async () => {
    const created = await createFlow({
      ...bearerFlow('Masked at birth'),
      triggerConfig: {},
      triggerType: 'manual',
      operations: [
        {
          key: 'call',
          type: 'http_request',
          config: { url: 'https://example.com', auth: { type: 'basic', username: 'u', password: MASK } },
        },
      ],
    })
    expect(created.missingCredentials).toEqual([{ step: 'call', path: 'config.auth.password' }])
    const renamed = await call('PATCH', `${BASE}/${created.id}`, {
      operations: [
        {
          key: 'other',
          type: 'http_request',
          config: { url: 'https://example.com', auth: { type: 'api_key', token: MASK } },
        },
      ],
    })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body.data.missingCredentials).toEqual([{ step: 'other', path: 'config.auth.token' }])
    // Anything else wrong is still 422 on save.
    const bad = await call('PATCH', `${BASE}/${created.id}`, {
      operations: [{ key: 'x', type: 'http_request', config: { auth: { type: 'bearer' } } }],
    })
    expect(bad.status, bad.text).toBe(422)
    expect(bad.body.message).toContain('url')
  })

  it('an unchanged export into the same project is 409, before its config is checked', async () => {
    const flow = await createFlow(bearerFlow('Taken slug'))
    const doc = (await call('GET', `${BASE}/${flow.id}/export`)).body.data
    const conflict = await call('POST', `${BASE}/import`, doc)
    expect(conflict.status, conflict.text).toBe(409)
    expect(conflict.body).toMatchObject({ error: 'conflict', details: { slug: flow.slug } })
    // A config that would be refused does not change the answer: the place is taken.
    const broken = { ...doc, operations: [{ key: 'a', type: 'no_such_operation', config: {} }] }
    expect((await call('POST', `${BASE}/import`, broken)).status).toBe(409)
    expect((await call('POST', `${BASE}/import`, { data: broken })).status).toBe(409)
  })

  it("the export's answer imports as it is: into another project, as a copy, and over the flow (flowId keeps the stored credentials)", async () => {
    const flow = await createFlow(bearerFlow('Wrapped'))
    const exported = (await call('GET', `${BASE}/${flow.id}/export`)).body
    expect(Object.keys(exported)).toEqual(['data'])

    const project = await call('POST', '/api/v1/projects', { name: 'Import elsewhere' })
    expect(project.status, project.text).toBe(201)
    const elsewhere = await request('POST', `${BASE}/import`, owner.token, exported, {
      'X-Project-Id': project.body.data.id as string,
    })
    expect(elsewhere.status, elsewhere.text).toBe(201)
    expect(elsewhere.body.data).toMatchObject({
      slug: flow.slug,
      projectId: project.body.data.id,
      missingCredentials: [
        { step: 'call', path: 'config.auth.token' },
        { step: null, path: 'triggerConfig.secret' },
      ],
    })

    const copy = await call('POST', `${BASE}/import`, { data: { ...exported.data, slug: 'wrapped-copy' } })
    expect(copy.status, copy.text).toBe(201)
    expect(copy.body.data.slug).toBe('wrapped-copy')

    const over = await call('POST', `${BASE}/import?flowId=${flow.id}`, exported)
    expect(over.status, over.text).toBe(200)
    expect(over.body.data).toMatchObject({ id: flow.id, missingCredentials: [] })
    const stored = await row(flow.id)
    expect(JSON.parse(stored.operations)[0].config.auth.token).toBe(BEARER)
    expect(JSON.parse(stored.trigger_config).secret).toBe(WEBHOOK_SECRET)
    expect((await call('POST', `${BASE}/${flow.id}/publish`, {})).status).toBe(200)
  })
})

describe('credential headers are masked everywhere', () => {
  let flowId: string
  let run: any

  beforeAll(async () => {
    const flow = await createFlow({
      name: 'Header creds',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [
        {
          key: 'rest',
          type: 'http_request',
          config: {
            url: `${base}/rest`,
            headers: { 'X-Api-Key': API_KEY, Cookie: COOKIE, 'X-Auth-Token': AUTH_TOKEN, 'X-Trace': 'visible-trace' },
          },
        },
        {
          key: 'gql',
          type: 'graphql_request',
          config: { url: `${base}/graphql`, query: '{ ok }', headers: { 'x-api-key': GQL_KEY } },
        },
      ],
    })
    flowId = flow.id
    // The owner (update) sees real values; sending the masks back (from the export) keeps them.
    const exported = (await call('GET', `${BASE}/${flowId}/export`)).body.data
    expect(exported.operations[0].config.headers).toEqual({
      'X-Api-Key': MASK,
      Cookie: MASK,
      'X-Auth-Token': MASK,
      'X-Trace': 'visible-trace',
    })
    const patched = await call('PATCH', `${BASE}/${flowId}`, { operations: exported.operations })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data.operations[0].config.headers).toMatchObject({
      'X-Api-Key': API_KEY,
      Cookie: COOKIE,
      'X-Auth-Token': AUTH_TOKEN,
    })
    expect((await call('POST', `${BASE}/${flowId}/publish`, { changeSummary: 'v1' })).status).toBe(200)
    expect((await call('PATCH', `${BASE}/${flowId}/status`, { status: 'active' })).status).toBe(200)
    run = await executeToEnd(call, call, flowId)
  })

  it('the receiving server gets the real values', () => {
    expect(run.status, JSON.stringify(run)).toBe('completed')
    const rest = receiver.received.find((r) => r.path === '/rest')
    expect(rest?.headers).toMatchObject({ 'x-api-key': API_KEY, cookie: COOKIE, 'x-auth-token': AUTH_TOKEN })
    expect(receiver.received.find((r) => r.path === '/graphql')?.headers['x-api-key']).toBe(GQL_KEY)
  })

  it("a run's step log shows the header names with masked values", () => {
    const rest = run.stepLogs.find((s: any) => s.key === 'rest')
    expect(JSON.stringify(rest)).toContain('X-Api-Key')
    expect(rest.input.headers).toEqual({
      'X-Api-Key': MASK,
      Cookie: MASK,
      'X-Auth-Token': MASK,
      'X-Trace': 'visible-trace',
    })
  })

  it('list, detail, versions and a version read by system/automate:read, the export and MCP show none of them', async () => {
    const reads = [
      await asReader('GET', BASE),
      await asReader('GET', `${BASE}/${flowId}`),
      await asReader('GET', `${BASE}/${flowId}/versions`),
      await asReader('GET', `${BASE}/${flowId}/versions/1`),
      await asReader('GET', `${BASE}/${flowId}/export`),
      await call('GET', `${BASE}/${flowId}/export`),
      await call('GET', `${AUTOMATE}/runs/${run.runId}`),
      await request('POST', `/api/v1/mcp/tools/get_flow_definition/invoke`, mcpKey, { arguments: { flowId } }),
    ]
    for (const reply of reads) expect(reply.status, reply.text).toBe(200)
    expect(JSON.stringify(reads[1]!.body.data.operations[1].config.headers)).toBe(JSON.stringify({ 'x-api-key': MASK }))
    expect(JSON.stringify(reads[3]!.body.data.snapshot)).toContain('X-Auth-Token')
  })

  it('no export, run, MCP answer or read without update held a credential, nor did the log', () => {
    expect(replies.length).toBeGreaterThan(10)
    for (const value of [...HEADER_SECRETS, BEARER, WEBHOOK_SECRET]) {
      for (const reply of replies) expect(reply.text).not.toContain(value)
      expect(server.logs.join('\n')).not.toContain(value)
    }
  })
})
