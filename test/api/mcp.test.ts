import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { nestedFilterJson } from '../../src/lib/filter/hostile-filters.js'
import { newId } from '../../src/lib/ids.js'
import type { DocsIndex } from '../../src/modules/mcp/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { startSibling } from '../support/sibling.js'

/**
 * The tool server (issue 18, core-api § Tool server, addendum §7) over real HTTP: every REST route and its
 * errors, sk- keys only, every tool and resource seen through a narrow key's row and column rules (the
 * attack: another collection, a hidden field, a hidden row, through any tool or resource), credentials
 * masked, the message log without bodies, the invocation log, and the per-key rate limit.
 */
const MCP = '/api/v1/mcp'
const HIDDEN_WORD = `zebra${randomBytes(4).toString('hex')}`
const HIDDEN_ROW_TITLE = `row-b-${randomBytes(4).toString('hex')}`
const OTHER_TITLE = `payroll-${randomBytes(4).toString('hex')}`
const BEARER = `tok-${randomBytes(8).toString('hex')}`
const WEBHOOK_SECRET = `whs-${randomBytes(8).toString('hex')}`

/** A tiny in-memory docs index (the real one reads docs/*.md). */
const pages = [
  { slug: 'records', title: 'Records', markdown: '# Records\n\nList, filter and page through records.' },
  { slug: 'flows', title: 'Flows', markdown: '# Flows\n\nAutomation flows run steps.' },
]
const fakeDocs: DocsIndex = {
  search: (query, limit = 10) =>
    pages
      .filter((p) => p.markdown.toLowerCase().includes(query.toLowerCase()))
      .slice(0, limit)
      .map((p, i) => ({ slug: p.slug, title: p.title, snippet: p.markdown.slice(0, 40), score: 1 / (i + 1) })),
  page: (slug) => pages.find((p) => p.slug === slug) ?? null,
  close: () => {},
}

let server: TestServer
let owner: Account
let reader: Account
let ownerKey: { id: string; raw: string }
let readerKey: { id: string; raw: string }
let flowId: string

const call = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })
const invoke = (token: string, tool: string, args: unknown = {}) =>
  call('POST', `${MCP}/tools/${tool}/invoke`, token, { arguments: args })
const resource = (token: string, uri: string) => call('GET', `${MCP}/resources/${encodeURIComponent(uri)}`, token)

async function keyOf(token: string, capabilities: string[]): Promise<{ id: string; raw: string }> {
  const reply = await call('POST', '/api/auth/api-keys', token, {
    label: `mcp ${randomBytes(3).toString('hex')}`,
    capabilities,
  })
  expect(reply.status, reply.text).toBe(201)
  return { id: reply.body.id, raw: reply.body.raw }
}

beforeAll(async () => {
  server = await startServer({}, { mcpDocs: fakeDocs })
  owner = await signUpOwner(server)
  const notes = {
    name: 'notes',
    fields: [
      { name: 'title', type: 'text', required: false },
      { name: 'secret', type: 'text', required: false },
      { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
      { name: 'team', type: 'text', required: false },
    ],
  }
  const created = await call('POST', '/api/v1/collections', owner.token, notes)
  expect(created.status, created.text).toBe(201)
  expect(
    (
      await call('POST', '/api/v1/collections', owner.token, {
        name: 'payroll',
        fields: [
          { name: 'title', type: 'text', required: false },
          { name: 'amount', type: 'number', required: false },
        ],
      })
    ).status,
  ).toBe(201)
  const rows = [
    { title: 'alpha', secret: HIDDEN_WORD, status: 'open', team: 'a' },
    { title: 'beta', secret: 'plain', status: 'closed', team: 'a' },
    { title: 'gamma', secret: 'plain', status: 'open', team: 'a' },
    { title: HIDDEN_ROW_TITLE, secret: 'plain', status: 'closed', team: 'b' },
    { title: 'delta', secret: 'plain', status: 'closed', team: 'b' },
  ]
  for (const row of rows)
    expect((await call('POST', '/api/v1/collections/notes/records', owner.token, row)).status).toBe(201)
  expect(
    (await call('POST', '/api/v1/collections/payroll/records', owner.token, { title: OTHER_TITLE, amount: 9000 }))
      .status,
  ).toBe(201)

  // The reader's role: notes only, rows of team a only, and not the `secret` field.
  const role = await call('POST', '/api/v1/roles', owner.token, { name: 'notes_reader' })
  expect(role.status, role.text).toBe(201)
  const grants = [
    {
      resource: 'collections/notes',
      action: 'read',
      item_filter: { team: { _eq: 'a' } },
      fields: ['title', 'status', 'team'],
    },
  ]
  expect((await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })).status).toBe(200)
  reader = await createAccount(server, owner.token, { role: 'notes_reader' })
  readerKey = await keyOf(reader.token, ['collections/notes:read'])
  ownerKey = await keyOf(owner.token, [
    'collections/*:read',
    'schema/*:read',
    'system/automate:read',
    'system/settings:read',
    'system/roles:read',
  ])

  const flow = await call('POST', '/api/v1/automate/flows', owner.token, {
    name: 'Sync orders',
    triggerType: 'webhook',
    triggerConfig: { require_auth: true, secret: WEBHOOK_SECRET, allowed_methods: ['POST'] },
    operations: [
      {
        key: 'call',
        type: 'http_request',
        config: { url: 'https://example.com', method: 'POST', auth: { type: 'bearer', token: BEARER } },
      },
    ],
  })
  expect(flow.status, flow.text).toBe(201)
  flowId = flow.body.data.id

  // Two logged messages (what send_email writes; its own tests cover the sending).
  const db = server.app.registry.system.db
  const projectId = server.app.defaultProject.id
  for (const [recipient, status, at] of [
    ['ann@example.com', 'sent', 1_000],
    ['bob@example.com', 'delivered', 2_000_000_000_000],
  ] as const) {
    await db
      .insertInto('email_messages')
      .values({
        id: newId(),
        project_id: projectId,
        message_id: `<${newId()}@x>`,
        recipient,
        channel: 'email_binding',
        status,
        flow_id: flowId,
        run_id: null,
        step_key: 'mail',
        created_at: at,
        delivered_at: null,
      })
      .execute()
  }
})
afterAll(async () => {
  await server?.stop()
})

describe('REST surface', () => {
  it('GET /api/v1/mcp: name, version, capabilities', async () => {
    const reply = await call('GET', MCP, ownerKey.raw)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({
      name: 'plinth-tool-server',
      version: expect.any(String),
      capabilities: { tools: { count: 9 }, resources: { count: 4 } },
    })
  })

  it('GET /api/v1/mcp with Accept: text/event-stream is 405 (no server stream)', async () => {
    const reply = await call('GET', MCP, ownerKey.raw, undefined, { accept: 'text/event-stream' })
    expect(reply.status, reply.text).toBe(405)
  })

  it('GET /tools lists the nine tools with input JSON Schemas', async () => {
    const reply = await call('GET', `${MCP}/tools`, ownerKey.raw)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((t: any) => t.name)).toEqual([
      'search_records',
      'list_collection_records',
      'aggregate_records',
      'introspect_schema',
      'list_flows',
      'get_flow_definition',
      'search_docs',
      'get_doc_page',
      'query_message_log',
    ])
    const search = reply.body.data[0]
    expect(search.inputSchema).toMatchObject({
      type: 'object',
      required: ['collection'],
      properties: { collection: { type: 'string' }, limit: { type: 'integer' } },
    })
  })

  it('GET /resources lists the four resources', async () => {
    const reply = await call('GET', `${MCP}/resources`, ownerKey.raw)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((r: any) => r.uri)).toEqual([
      'service://project/context',
      'service://collections',
      'service://system/settings',
      'service://docs/agent-rules',
    ])
  })

  it('GET /resources/:uri reads each resource', async () => {
    const context = await resource(ownerKey.raw, 'service://project/context')
    expect(context.status, context.text).toBe(200)
    expect(context.body.data.content).toMatchObject({
      collections: ['notes', 'payroll'],
      auth: { method: 'api_key', keyId: ownerKey.id },
    })
    expect(context.body.data.content.flows.map((f: any) => f.id)).toContain(flowId)
    expect(context.body.data.content.roles.map((r: any) => r.name)).toContain('notes_reader')
    const collections = await resource(ownerKey.raw, 'service://collections')
    expect(
      collections.body.data.content.collections.find((c: any) => c.name === 'notes').fields.map((f: any) => f.name),
    ).toEqual(['title', 'secret', 'status', 'team'])
    const settings = await resource(ownerKey.raw, 'service://system/settings')
    expect(settings.status, settings.text).toBe(200)
    expect(settings.body.data.content.settings).toMatchObject({ 'ai.mcp_rate_limit': 100, 'i18n.defaultLocale': 'en' })
    expect(Object.keys(settings.body.data.content.settings)).not.toContain('ai.agent_rules')
    const rules = await resource(ownerKey.raw, 'service://docs/agent-rules')
    expect(rules.body.data).toMatchObject({
      mimeType: 'text/markdown',
      content: expect.stringContaining('# Agent rules'),
    })
  })

  it('agent rules come from the setting ai.agent_rules', async () => {
    expect(
      (await call('PATCH', '/api/v1/settings', owner.token, { 'ai.agent_rules': '# House rules\n\nBe brief.' })).status,
    ).toBe(200)
    expect((await resource(readerKey.raw, 'service://docs/agent-rules')).body.data.content).toBe(
      '# House rules\n\nBe brief.',
    )
  })

  it('an unknown resource or tool is 404; bad arguments are 422 naming the path', async () => {
    expect((await resource(ownerKey.raw, 'service://nope')).body).toMatchObject({ error: 'not_found' })
    const unknown = await invoke(ownerKey.raw, 'drop_everything', {})
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe('not_found')
    const missing = await invoke(ownerKey.raw, 'search_records', { limit: 5 })
    expect(missing.status).toBe(422)
    expect(missing.body).toMatchObject({
      error: 'validation_error',
      details: { issues: [{ path: 'arguments.collection' }] },
    })
    expect(missing.body.message).toContain('arguments.collection')
    const extra = await invoke(ownerKey.raw, 'list_flows', { write: true })
    expect(extra.status).toBe(422)
    const wrongType = await invoke(ownerKey.raw, 'search_records', { collection: 'notes', limit: 'ten' })
    expect(wrongType.body.details.issues[0].path).toBe('arguments.limit')
    const body = await call('POST', `${MCP}/tools/list_flows/invoke`, ownerKey.raw, { arguments: 'x' })
    expect(body.status).toBe(400)
  })

  it('refuses a session token, a missing credential and a bad key with 401', async () => {
    for (const path of [
      MCP,
      `${MCP}/tools`,
      `${MCP}/resources`,
      `${MCP}/resources/${encodeURIComponent('service://collections')}`,
    ]) {
      for (const token of [owner.token, reader.token, undefined, 'sk-not-a-key']) {
        const reply = await call('GET', path, token)
        expect(reply.status, `${path} ${token?.slice(0, 6)}`).toBe(401)
        expect(reply.body.error).toBe('unauthorized')
      }
    }
    const viaSession = await invoke(owner.token, 'list_flows', {})
    expect(viaSession.status).toBe(401)
    const badArgsViaSession = await invoke(owner.token, 'search_records', { nope: 1 })
    expect(badArgsViaSession.status).toBe(401)
  })

  it('refuses a capability token with 401', async () => {
    const notes = await call('GET', '/api/v1/collections/notes/records', owner.token)
    const minted = await call('POST', '/api/v1/capability-tokens', owner.token, {
      collection: 'notes',
      documentId: notes.body.data[0].id,
    })
    expect(minted.status, minted.text).toBe(201)
    const token = minted.body.data?.token ?? minted.body.token
    expect(typeof token).toBe('string')
    expect((await call('GET', `${MCP}/tools`, token)).status).toBe(401)
    expect((await invoke(token, 'search_records', { collection: 'notes' })).status).toBe(401)
  })
})

describe('tools, for a key that may read everything', () => {
  it('search_records filters and searches', async () => {
    const open = await invoke(ownerKey.raw, 'search_records', {
      collection: 'notes',
      filter: { status: { _eq: 'open' } },
    })
    expect(open.status, open.text).toBe(200)
    expect(open.body.data.records.map((r: any) => r.title).sort()).toEqual(['alpha', 'gamma'])
    expect(open.body.data).toMatchObject({ total: 2, hasMore: false })
    const found = await invoke(ownerKey.raw, 'search_records', { collection: 'notes', search: HIDDEN_WORD })
    expect(found.body.data.records.map((r: any) => r.title)).toEqual(['alpha'])
    const asText = await invoke(ownerKey.raw, 'search_records', {
      collection: 'notes',
      filter: JSON.stringify({ team: { _eq: 'b' } }),
      limit: 1,
    })
    expect(asText.body.data).toMatchObject({ total: 2, hasMore: true })
  })

  it('list_collection_records pages with cursors', async () => {
    const first = await invoke(ownerKey.raw, 'list_collection_records', { collection: 'notes', limit: 3 })
    expect(first.status, first.text).toBe(200)
    expect(first.body.data.records).toHaveLength(3)
    expect(first.body.data.cursors.previous).toBeNull()
    expect(first.body.data.cursors.next).toEqual(expect.any(String))
    const second = await invoke(ownerKey.raw, 'list_collection_records', {
      collection: 'notes',
      limit: 3,
      cursor: first.body.data.cursors.next,
    })
    expect(second.body.data.records).toHaveLength(2)
    expect(second.body.data.cursors.next).toBeNull()
    const ids = [...first.body.data.records, ...second.body.data.records].map((r: any) => r.id)
    expect(new Set(ids).size).toBe(5)
  })

  it('aggregate_records counts, and counts per group', async () => {
    expect((await invoke(ownerKey.raw, 'aggregate_records', { collection: 'notes' })).body.data).toEqual({ count: 5 })
    expect(
      (await invoke(ownerKey.raw, 'aggregate_records', { collection: 'notes', filter: { team: { _eq: 'a' } } })).body
        .data,
    ).toEqual({ count: 3 })
    const grouped = await invoke(ownerKey.raw, 'aggregate_records', { collection: 'notes', groupBy: 'status' })
    expect(grouped.body.data.groups).toEqual([
      { value: 'closed', count: 3 },
      { value: 'open', count: 2 },
    ])
  })

  it('introspect_schema answers field definitions', async () => {
    const reply = await invoke(ownerKey.raw, 'introspect_schema', { collection: 'notes' })
    expect(reply.body.data).toMatchObject({
      name: 'notes',
      fields: [
        { name: 'title', type: 'text', required: false },
        { name: 'secret' },
        { name: 'status', type: 'enum', required: false, enumValues: ['open', 'closed'] },
        { name: 'team' },
      ],
    })
  })

  it('list_flows and get_flow_definition mask every credential', async () => {
    const list = await invoke(ownerKey.raw, 'list_flows')
    expect(list.body.data.flows).toContainEqual(
      expect.objectContaining({ id: flowId, name: 'Sync orders', triggerType: 'webhook', status: 'draft' }),
    )
    const one = await invoke(ownerKey.raw, 'get_flow_definition', { flowId })
    expect(one.status, one.text).toBe(200)
    expect(one.body.data.operations[0]).toMatchObject({ key: 'call', type: 'http_request' })
    for (const secret of [BEARER, WEBHOOK_SECRET]) expect(one.text).not.toContain(secret)
    const token = (await call('GET', `/api/v1/automate/flows/${flowId}`, owner.token)).body.data.webhookEndpoint
      .token as string
    expect(token.length).toBeGreaterThan(8)
    expect(one.text).not.toContain(token)
    expect((await invoke(ownerKey.raw, 'get_flow_definition', { flowId: 'nope' })).status).toBe(404)
  })

  it('query_message_log answers the log, filtered, never a body', async () => {
    const all = await invoke(ownerKey.raw, 'query_message_log')
    expect(all.status, all.text).toBe(200)
    expect(all.body.data.total).toBe(2)
    expect(Object.keys(all.body.data.messages[0]).sort()).toEqual([
      'channel',
      'createdAt',
      'deliveredAt',
      'flowId',
      'id',
      'messageId',
      'recipient',
      'runId',
      'status',
      'stepKey',
    ])
    expect(
      (await invoke(ownerKey.raw, 'query_message_log', { to: 'ANN@example.com' })).body.data.messages.map(
        (m: any) => m.recipient,
      ),
    ).toEqual(['ann@example.com'])
    expect(
      (await invoke(ownerKey.raw, 'query_message_log', { status: 'delivered' })).body.data.messages.map(
        (m: any) => m.recipient,
      ),
    ).toEqual(['bob@example.com'])
    expect(
      (await invoke(ownerKey.raw, 'query_message_log', { since: '2030-01-01T00:00:00Z' })).body.data.messages.map(
        (m: any) => m.recipient,
      ),
    ).toEqual(['bob@example.com'])
    expect((await invoke(ownerKey.raw, 'query_message_log', { limit: 1 })).body.data.messages).toHaveLength(1)
  })

  it('search_docs and get_doc_page answer from the docs index', async () => {
    const search = await invoke(ownerKey.raw, 'search_docs', { query: 'records' })
    expect(search.status, search.text).toBe(200)
    expect(search.body.data.results.map((r: any) => r.slug)).toEqual(['records'])
    expect(search.body.data.results[0]).toMatchObject({
      title: 'Records',
      snippet: expect.any(String),
      score: expect.any(Number),
    })
    const page = await invoke(readerKey.raw, 'get_doc_page', { slug: 'flows' })
    expect(page.body.data).toEqual(pages[1])
    expect((await invoke(ownerKey.raw, 'get_doc_page', { slug: 'no-such-page' })).status).toBe(404)
  })

  it('no tool writes: nothing changed', async () => {
    const notes = await call('GET', '/api/v1/collections/notes/records?limit=100', owner.token)
    expect(notes.body.total).toBe(5)
  })
})

describe('search_docs and get_doc_page on a server with its own docs/ (no index given)', () => {
  let plain: TestServer
  afterAll(async () => plain?.stop())

  it("search the project's docs pages, ranked, and serve one page as markdown", async () => {
    plain = await startServer()
    const admin = await signUpOwner(plain)
    const created = await plain.request('POST', '/api/auth/api-keys', {
      token: admin.token,
      body: { label: 'docs', capabilities: [] },
    })
    expect(created.status, created.text).toBe(201)
    const run = (tool: string, args: unknown) =>
      plain.request('POST', `${MCP}/tools/${tool}/invoke`, { token: created.body.raw, body: { arguments: args } })
    const search = await run('search_docs', { query: 'tool server rate limit' })
    expect(search.status, search.text).toBe(200)
    expect(search.body.data.results.map((r: any) => r.slug)).toContain('mcp')
    const page = await run('get_doc_page', { slug: 'operations' })
    expect(page.status, page.text).toBe(200)
    expect(page.body.data.markdown).toContain('send_email')
    expect((await run('get_doc_page', { slug: '../package' })).status).toBe(404)
  })
})

describe('the attack: a key limited to one collection, some of its fields and some of its rows', () => {
  it('cannot see the other collection through any tool', async () => {
    for (const tool of ['search_records', 'list_collection_records', 'aggregate_records', 'introspect_schema']) {
      const reply = await invoke(readerKey.raw, tool, { collection: 'payroll' })
      expect(reply.status, `${tool} ${reply.text}`).toBe(404)
      expect(reply.body.error).toBe('collection_not_found')
      expect(reply.text).not.toContain(OTHER_TITLE)
    }
  })

  it('cannot see the other collection, the hidden field or hidden rows through any resource', async () => {
    const context = await resource(readerKey.raw, 'service://project/context')
    expect(context.body.data.content).toMatchObject({ collections: ['notes'], roles: null, flows: null })
    const collections = await resource(readerKey.raw, 'service://collections')
    expect(collections.body.data.content.collections.map((c: any) => c.name)).toEqual(['notes'])
    expect(collections.body.data.content.collections[0].fields.map((f: any) => f.name)).toEqual([
      'title',
      'status',
      'team',
    ])
    expect((await resource(readerKey.raw, 'service://system/settings')).status).toBe(403)
    for (const uri of ['service://project/context', 'service://collections', 'service://docs/agent-rules']) {
      const reply = await resource(readerKey.raw, uri)
      expect(reply.text).not.toContain('payroll')
      expect(reply.text).not.toContain('"secret"')
      expect(reply.text).not.toContain(HIDDEN_WORD)
      expect(reply.text).not.toContain(HIDDEN_ROW_TITLE)
    }
  })

  it('sees only its rows and fields through search_records, list_collection_records and introspect_schema', async () => {
    const search = await invoke(readerKey.raw, 'search_records', { collection: 'notes' })
    expect(search.status, search.text).toBe(200)
    expect(search.body.data.records.map((r: any) => r.title).sort()).toEqual(['alpha', 'beta', 'gamma'])
    expect(search.body.data.total).toBe(3)
    for (const r of search.body.data.records) expect(r).not.toHaveProperty('secret')
    const list = await invoke(readerKey.raw, 'list_collection_records', { collection: 'notes', limit: 100 })
    expect(list.body.data.records.map((r: any) => r.title).sort()).toEqual(['alpha', 'beta', 'gamma'])
    expect(list.text).not.toContain(HIDDEN_WORD)
    expect(list.text).not.toContain(HIDDEN_ROW_TITLE)
    const schema = await invoke(readerKey.raw, 'introspect_schema', { collection: 'notes' })
    expect(schema.body.data.fields.map((f: any) => f.name)).toEqual(['title', 'status', 'team'])
  })

  it('cannot probe the hidden field or hidden rows with a search or a filter', async () => {
    const searched = await invoke(readerKey.raw, 'search_records', { collection: 'notes', search: HIDDEN_WORD })
    expect(searched.status).toBe(403)
    expect(searched.text).not.toContain('alpha')
    const byHiddenField = await invoke(readerKey.raw, 'search_records', {
      collection: 'notes',
      filter: { secret: { _eq: HIDDEN_WORD } },
    })
    expect(byHiddenField.status).toBe(403)
    const hiddenRows = await invoke(readerKey.raw, 'search_records', {
      collection: 'notes',
      filter: { team: { _eq: 'b' } },
    })
    expect(hiddenRows.body.data).toMatchObject({ records: [], total: 0 })
    const byTitle = await invoke(readerKey.raw, 'search_records', {
      collection: 'notes',
      filter: { title: { _eq: HIDDEN_ROW_TITLE } },
    })
    expect(byTitle.body.data.total).toBe(0)
  })

  it('aggregate_records counts and groups only its rows, and cannot group or filter by the hidden field', async () => {
    expect((await invoke(readerKey.raw, 'aggregate_records', { collection: 'notes' })).body.data).toEqual({ count: 3 })
    const grouped = await invoke(readerKey.raw, 'aggregate_records', { collection: 'notes', groupBy: 'status' })
    expect(grouped.body.data.groups).toEqual([
      { value: 'closed', count: 1 },
      { value: 'open', count: 2 },
    ])
    const byTeam = await invoke(readerKey.raw, 'aggregate_records', { collection: 'notes', groupBy: 'team' })
    expect(byTeam.body.data.groups).toEqual([{ value: 'a', count: 3 }])
    const bySecret = await invoke(readerKey.raw, 'aggregate_records', { collection: 'notes', groupBy: 'secret' })
    expect(bySecret.status).toBe(403)
    expect(bySecret.text).not.toContain(HIDDEN_WORD)
    const filtered = await invoke(readerKey.raw, 'aggregate_records', {
      collection: 'notes',
      filter: { secret: { _eq: HIDDEN_WORD } },
    })
    expect(filtered.status).toBe(403)
  })

  it('a key limited by rows alone cannot find a hidden row by full-text search or count it', async () => {
    const role = await call('POST', '/api/v1/roles', owner.token, { name: 'team_a_reader' })
    const grants = [{ resource: 'collections/notes', action: 'read', item_filter: { team: { _eq: 'a' } } }]
    expect((await call('PUT', `/api/v1/roles/${role.body.data.id}/grants`, owner.token, { grants })).status).toBe(200)
    const person = await createAccount(server, owner.token, { role: 'team_a_reader' })
    const key = await keyOf(person.token, ['collections/notes:read'])
    const searched = await invoke(key.raw, 'search_records', { collection: 'notes', search: HIDDEN_ROW_TITLE })
    expect(searched.status, searched.text).toBe(200)
    expect(searched.body.data).toMatchObject({ records: [], total: 0 })
    const visible = await invoke(key.raw, 'search_records', { collection: 'notes', search: HIDDEN_WORD })
    expect(visible.body.data.records.map((r: any) => r.title)).toEqual(['alpha'])
    expect(
      (
        await invoke(key.raw, 'aggregate_records', {
          collection: 'notes',
          filter: { title: { _eq: HIDDEN_ROW_TITLE } },
        })
      ).body.data,
    ).toEqual({ count: 0 })
  })

  it('cannot read flows or the message log', async () => {
    expect((await invoke(readerKey.raw, 'list_flows')).status).toBe(403)
    expect((await invoke(readerKey.raw, 'get_flow_definition', { flowId })).status).toBe(403)
    const log = await invoke(readerKey.raw, 'query_message_log')
    expect(log.status).toBe(403)
    expect(log.text).not.toContain('ann@example.com')
  })
})

describe('GET /api/v1/mcp/log', () => {
  it('holds every invocation with tool, key, estimated tokens, duration and outcome', async () => {
    const reply = await call('GET', `${MCP}/log?limit=100`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.total).toBeGreaterThan(20)
    const row = reply.body.data.find(
      (r: any) => r.tool === 'introspect_schema' && r.keyId === readerKey.id && r.outcome === 'ok',
    )
    expect(row).toMatchObject({
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      durationMs: expect.any(Number),
      createdAt: expect.any(String),
    })
    expect(row.inputTokens).toBeGreaterThan(0)
    expect(row.outputTokens).toBeGreaterThan(0)
    expect(reply.body.data.some((r: any) => r.keyId === readerKey.id && r.outcome === 'forbidden')).toBe(true)
    expect(reply.body.data.some((r: any) => r.outcome === 'validation_error')).toBe(true)
    expect(reply.text).not.toContain(HIDDEN_WORD)
  })

  it('filters by key, tool and time, and pages', async () => {
    const byKey = await call('GET', `${MCP}/log?key=${readerKey.id}&limit=100`, owner.token)
    expect(byKey.body.data.every((r: any) => r.keyId === readerKey.id)).toBe(true)
    expect(byKey.body.total).toBeGreaterThan(0)
    const byTool = await call('GET', `${MCP}/log?tool=aggregate_records&key=${readerKey.id}`, owner.token)
    expect(byTool.body.data.map((r: any) => r.tool)).toEqual(Array(byTool.body.total).fill('aggregate_records'))
    expect(byTool.body.total).toBe(6)
    expect((await call('GET', `${MCP}/log?since=2999-01-01T00:00:00Z`, owner.token)).body.total).toBe(0)
    expect((await call('GET', `${MCP}/log?until=1000`, owner.token)).body.total).toBe(0)
    const page = await call('GET', `${MCP}/log?limit=2&page=2`, owner.token)
    expect(page.body).toMatchObject({ page: 2, limit: 2, hasMore: true })
    expect(page.body.data).toHaveLength(2)
    expect((await call('GET', `${MCP}/log?since=yesterday`, owner.token)).status).toBe(400)
  })

  it('is for admins: a role without system/audit-log:read is 403, no credential 401', async () => {
    expect((await call('GET', `${MCP}/log`, reader.token)).status).toBe(403)
    expect((await call('GET', `${MCP}/log`, readerKey.raw)).status).toBe(403)
    expect((await call('GET', `${MCP}/log`, undefined)).status).toBe(401)
  })
})

/** The SDK's own client over real HTTP, with the key as Bearer. */
async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'plinth-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}${MCP}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  )
  return client
}
const textOf = (result: any): string => result.content.map((c: any) => c.text).join('')

describe('MCP over Streamable HTTP, with the SDK Client', () => {
  it('a filter nested 5,000 or 50,000 levels deep is a clean refusal on every tool that takes one, never a 500 (issue 26)', async () => {
    const client = await mcpClient(ownerKey.raw)
    try {
      for (const levels of [5_000, 50_000]) {
        for (const combinator of ['_and', '_or'] as const) {
          // Deeper than JSON.stringify can write (the client's side): the filter goes as the JSON text the tools also take.
          const filter = nestedFilterJson(levels, combinator)
          for (const [tool, args] of [
            ['search_records', { collection: 'notes', filter }],
            ['aggregate_records', { collection: 'notes', groupBy: 'team', filter }],
            ['list_collection_records', { collection: 'notes', filter }],
          ] as const) {
            const rest = await invoke(ownerKey.raw, tool, args)
            expect([400, 422], `${tool} ${levels} ${combinator}: ${rest.status} ${rest.text.slice(0, 200)}`).toContain(
              rest.status,
            )
            // The same nesting as an object in the request (written by hand: too deep for JSON.stringify).
            const { filter: text, ...rest2 } = args as Record<string, unknown>
            const rawBody = `{"arguments":${JSON.stringify(rest2).slice(0, -1)},"filter":${text as string}}}`
            const asObject = await server.request('POST', `${MCP}/tools/${tool}/invoke`, {
              token: ownerKey.raw,
              rawBody,
              headers: { 'content-type': 'application/json' },
            })
            expect(
              [400, 413, 422],
              `${tool} ${levels} ${combinator} as an object: ${asObject.status} ${asObject.text.slice(0, 200)}`,
            ).toContain(asObject.status)
            const viaMcp: any = await client.callTool({ name: tool, arguments: args })
            expect(viaMcp.isError, `${tool} over MCP`).toBe(true)
            expect(JSON.parse(textOf(viaMcp)).error).toMatch(/invalid_request|validation_error/)
          }
        }
      }
    } finally {
      await client.close()
    }
  })

  it('initializes, lists the tools with input schemas and the resources', async () => {
    const client = await mcpClient(ownerKey.raw)
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'plinth-tool-server' })
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} })
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toHaveLength(9)
      expect(tools.find((t) => t.name === 'aggregate_records')!.inputSchema).toMatchObject({
        type: 'object',
        required: ['collection'],
        properties: { groupBy: { type: 'string' } },
      })
      const { resources: listed } = await client.listResources()
      expect(listed.map((r) => r.uri)).toEqual([
        'service://project/context',
        'service://collections',
        'service://system/settings',
        'service://docs/agent-rules',
      ])
    } finally {
      await client.close()
    }
  })

  it('calls every tool', async () => {
    const client = await mcpClient(ownerKey.raw)
    try {
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result: any = await client.callTool({ name, arguments: args })
        expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy()
        return JSON.parse(textOf(result))
      }
      expect((await call('search_records', { collection: 'notes', filter: { status: { _eq: 'open' } } })).total).toBe(2)
      expect((await call('list_collection_records', { collection: 'notes', limit: 2 })).cursors.next).toEqual(
        expect.any(String),
      )
      expect(await call('aggregate_records', { collection: 'notes', groupBy: 'team' })).toEqual({
        groups: [
          { value: 'a', count: 3 },
          { value: 'b', count: 2 },
        ],
        hasMore: false,
      })
      expect((await call('introspect_schema', { collection: 'payroll' })).fields.map((f: any) => f.name)).toEqual([
        'title',
        'amount',
      ])
      expect((await call('list_flows')).flows.map((f: any) => f.id)).toContain(flowId)
      const flow = await call('get_flow_definition', { flowId })
      expect(JSON.stringify(flow)).not.toContain(BEARER)
      expect((await call('search_docs', { query: 'automation' })).results.map((r: any) => r.slug)).toEqual(['flows'])
      expect((await call('get_doc_page', { slug: 'records' })).title).toBe('Records')
      expect((await call('query_message_log', { status: 'sent' })).messages.map((m: any) => m.recipient)).toEqual([
        'ann@example.com',
      ])
      const bad: any = await client.callTool({ name: 'search_records', arguments: { limit: 3 } })
      expect(bad.isError).toBe(true)
      expect(JSON.parse(textOf(bad))).toMatchObject({
        error: 'validation_error',
        details: { issues: [{ path: 'arguments.collection' }] },
      })
      const log = await call('query_message_log', { limit: 1 })
      expect(log.messages).toHaveLength(1)
    } finally {
      await client.close()
    }
    const logged = await call('GET', `${MCP}/log?key=${ownerKey.id}&tool=get_doc_page`, owner.token)
    expect(logged.body.data.some((r: any) => r.outcome === 'ok')).toBe(true)
  })

  it('reads every resource', async () => {
    const client = await mcpClient(ownerKey.raw)
    try {
      const read = async (uri: string) =>
        (await client.readResource({ uri })).contents[0] as { uri: string; mimeType: string; text: string }
      expect(JSON.parse((await read('service://project/context')).text).collections).toEqual(['notes', 'payroll'])
      expect(JSON.parse((await read('service://collections')).text).collections).toHaveLength(2)
      expect(JSON.parse((await read('service://system/settings')).text).settings).toHaveProperty('i18n.defaultLocale')
      expect(await read('service://docs/agent-rules')).toMatchObject({
        mimeType: 'text/markdown',
        text: expect.stringContaining('#'),
      })
      await expect(client.readResource({ uri: 'service://nope' })).rejects.toThrow(/No resource/)
    } finally {
      await client.close()
    }
  })

  it('the narrow key sees through MCP exactly what it sees through REST', async () => {
    const client = await mcpClient(readerKey.raw)
    try {
      const other: any = await client.callTool({ name: 'search_records', arguments: { collection: 'payroll' } })
      expect(other.isError).toBe(true)
      expect(JSON.parse(textOf(other)).error).toBe('collection_not_found')
      const grouped: any = await client.callTool({
        name: 'aggregate_records',
        arguments: { collection: 'notes', groupBy: 'team' },
      })
      expect(JSON.parse(textOf(grouped))).toEqual({ groups: [{ value: 'a', count: 3 }], hasMore: false })
      const searched: any = await client.callTool({
        name: 'search_records',
        arguments: { collection: 'notes', search: HIDDEN_WORD },
      })
      expect(searched.isError).toBe(true)
      expect(textOf(searched)).not.toContain('alpha')
      const listed: any = await client.callTool({
        name: 'list_collection_records',
        arguments: { collection: 'notes', limit: 100 },
      })
      expect(
        JSON.parse(textOf(listed))
          .records.map((r: any) => r.title)
          .sort(),
      ).toEqual(['alpha', 'beta', 'gamma'])
      expect(textOf(listed)).not.toContain(HIDDEN_WORD)
      const collections = (await client.readResource({ uri: 'service://collections' })).contents[0] as { text: string }
      expect(
        JSON.parse(collections.text).collections.map((c: any) => [c.name, c.fields.map((f: any) => f.name)]),
      ).toEqual([['notes', ['title', 'status', 'team']]])
      await expect(client.readResource({ uri: 'service://system/settings' })).rejects.toThrow()
    } finally {
      await client.close()
    }
  })

  it('answers a body that is not JSON-RPC with a client error, never a 500', async () => {
    const accept = { accept: 'application/json, text/event-stream' }
    const notRpc = await call('POST', MCP, ownerKey.raw, { hello: 'world' }, accept)
    expect(notRpc.status).toBe(400)
    const unknownMethod = await call(
      'POST',
      MCP,
      ownerKey.raw,
      { jsonrpc: '2.0', id: 7, method: 'records/delete', params: {} },
      accept,
    )
    expect(unknownMethod.status).toBeLessThan(500)
    expect(unknownMethod.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } })
    const notJson = await server.request('POST', MCP, {
      token: ownerKey.raw,
      rawBody: '{oops',
      headers: { ...accept, 'content-type': 'application/json' },
    })
    expect(notJson.status).toBe(400)
  })

  it('refuses a session token with 401', async () => {
    await expect(mcpClient(owner.token)).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('unauthorized'),
    })
    const raw = await call(
      'POST',
      MCP,
      owner.token,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: 'application/json, text/event-stream' },
    )
    expect(raw.status).toBe(401)
  })
})

describe('rate limit', () => {
  it('answers 429 with Retry-After past ai.mcp_rate_limit requests a minute per key, other keys unaffected', async () => {
    const key = await keyOf(owner.token, ['collections/*:read'])
    expect((await call('PATCH', '/api/v1/settings', owner.token, { 'ai.mcp_rate_limit': 3 })).status).toBe(200)
    try {
      expect((await invoke(key.raw, 'aggregate_records', { collection: 'notes' })).status).toBe(200)
      expect((await call('GET', `${MCP}/tools`, key.raw)).status).toBe(200)
      expect((await resource(key.raw, 'service://collections')).status).toBe(200)
      const refused = await invoke(key.raw, 'aggregate_records', { collection: 'notes' })
      expect(refused.status).toBe(429)
      expect(refused.body.error).toBe('rate_limited')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect((await call('GET', MCP, key.raw)).status).toBe(429)
      const other = await keyOf(owner.token, ['collections/*:read'])
      expect((await call('GET', `${MCP}/tools`, other.raw)).status).toBe(200)
      // The MCP surface counts against the same limit: 429 with Retry-After before any JSON-RPC.
      const rpc = await call(
        'POST',
        MCP,
        key.raw,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { accept: 'application/json, text/event-stream' },
      )
      expect(rpc.status).toBe(429)
      expect(Number(rpc.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      await expect(mcpClient(key.raw)).rejects.toMatchObject({
        code: 429,
        message: expect.stringContaining('rate_limited'),
      })
    } finally {
      expect((await call('PATCH', '/api/v1/settings', owner.token, { 'ai.mcp_rate_limit': 100 })).status).toBe(200)
    }
  })
})

describe.runIf(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL)(
  'rate limit across two instances (PostgreSQL + Redis)',
  () => {
    let b: TestServer
    beforeAll(async () => {
      b = await startSibling(server, {})
    })
    afterAll(async () => {
      await b?.stop()
    })

    it('one key is counted once across both instances and both surfaces', async () => {
      const key = await keyOf(owner.token, ['collections/*:read'])
      expect((await call('PATCH', '/api/v1/settings', owner.token, { 'ai.mcp_rate_limit': 4 })).status).toBe(200)
      const rpc = (on: TestServer) =>
        on.request('POST', MCP, {
          token: key.raw,
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          headers: { accept: 'application/json, text/event-stream' },
        })
      try {
        expect((await server.request('GET', `${MCP}/tools`, { token: key.raw })).status).toBe(200)
        expect((await rpc(b)).status).toBe(200)
        expect(
          (
            await b.request('POST', `${MCP}/tools/aggregate_records/invoke`, {
              token: key.raw,
              body: { arguments: { collection: 'notes' } },
            })
          ).status,
        ).toBe(200)
        expect((await rpc(server)).status).toBe(200)
        for (const refused of [
          await rpc(b),
          await b.request('GET', `${MCP}/tools`, { token: key.raw }),
          await rpc(server),
        ]) {
          expect(refused.status).toBe(429)
          expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        }
      } finally {
        expect((await call('PATCH', '/api/v1/settings', owner.token, { 'ai.mcp_rate_limit': 100 })).status).toBe(200)
      }
    })
  },
)
