import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

/**
 * Every entry point that takes a filter, over real HTTP (decision 051): a filter nested 5,000 or 50,000
 * levels deep (`_and`, `_or`, or both in turn) is a clean refusal in the error envelope (400, or 422 where
 * a definition is saved; a tool error over MCP), never a 500; nothing is stored, and the server still
 * answers /health. A filter only moderately too deep (20 levels) is refused too where it is saved, not
 * when it runs. The last test walks the OpenAPI document, so an operation taking a filter that is missing
 * from the table fails it.
 */

// 100 levels pass the body's nesting bound (256 containers) and reach each entry point's own guard; from
// 5,000 on, a JSON body is refused as a whole first (lib/json-bounds maxJsonNesting), a query filter is not.
const LEVELS = [100, 5_000, 50_000] as const
const SHAPES = ['_and', '_or', 'mixed'] as const
type Shape = (typeof SHAPES)[number]

/** The filter as JSON text: deeper than JSON.stringify can write, so built as text (JSON.parse copes). */
function deepFilter(levels: number, shape: Shape): string {
  const open = (i: number) => `{"${shape === 'mixed' ? (i % 2 === 0 ? '_and' : '_or') : shape}":[`
  let head = ''
  for (let i = 0; i < levels; i += 1) head += open(i)
  return `${head}{"title":"x"}${']}'.repeat(levels)}`
}

let server: TestServer
let owner: Account
let mcpKey: string
let lensId: string
let viewId: string
let flowId: string
let templatedFlowId: string
let roleId: string

const json = { 'content-type': 'application/json' }
const send = (
  method: string,
  path: string,
  rawBody: string,
  headers: Record<string, string> = {},
  token = owner.token,
): Promise<Reply> => server.request(method, path, { token, rawBody, headers: { ...json, ...headers } })
const get = (path: string): Promise<Reply> => server.request('GET', path, { token: owner.token })
const body = (reply: Reply) => reply.body as Record<string, any>

const FLOWS = '/api/v1/automate/flows'
const flowBody = (type: string, filter: string) => {
  const config =
    type === 'crud_update'
      ? `{"collection":"notes","data":{"title":"y"},"filter":${filter}}`
      : type === 'crud_action'
        ? `{"collection":"notes","action":"delete","filter":${filter}}`
        : type === 'crud_query'
          ? `{"collection":"notes","groupBy":["team"],"filter":${filter}}`
          : `{"collection":"notes","filter":${filter}}`
  return `[{"key":"step_one","type":"${type}","config":${config}}]`
}

/** What an entry point answers and what it must not have kept. */
interface Case {
  /** The OpenAPI operation (`GET /api/v1/…`) it covers; null for a way in the document does not describe (JSON-RPC). */
  readonly operation: string | null
  readonly name: string
  send(filter: string, levels: number): Promise<Reply>
  /** Checks the answer (status and envelope). */
  refused(reply: Reply): void
  /** A snapshot of what the call could have changed, taken before and after: equal means nothing stored. */
  state?(): Promise<unknown>
}

const envelope = (reply: Reply, statuses: number[], codes: RegExp) => {
  expect(statuses, `${reply.status} ${reply.text.slice(0, 300)}`).toContain(reply.status)
  expect(body(reply).error, reply.text.slice(0, 300)).toMatch(codes)
  expect(typeof body(reply).message).toBe('string')
}
/** A query string past the HTTP layer's 64 KiB of request line and headers is 431 before the app sees it; one within it reaches the filter's bounds (400). */
const queryRefused = (reply: Reply) => envelope(reply, [400, 431], /^(invalid_request|headers_too_large)$/)
const saveRefused = (reply: Reply) => envelope(reply, [422], /^validation_error$/)
const viewsState = async () =>
  body(await get('/api/v1/views?limit=100')).data.map((v: any) => [v.id, JSON.stringify(v.filter), v.updatedAt])
const lensesState = async () =>
  body(await get('/api/v1/lenses?limit=100')).data.map((l: any) => [l.id, l.filter, l.updatedAt])
const flowsState = async () =>
  body(await get(FLOWS)).data.map((f: any) => [f.id, JSON.stringify(f.operations), f.updatedAt])
const grantsState = async () => body(await get(`/api/v1/roles/${roleId}/grants`)).data
const recordsState = async () =>
  body(await get('/api/v1/collections/notes/records?limit=100')).data.map((r: any) => [r.id, r.title])

const qs = (filter: string) => encodeURIComponent(filter)
/** A tool's arguments with the filter as an object (the tools refuse a key they do not take, so each gets only its own). */
const toolArguments = (tool: string, filter: string) =>
  `{"collection":"notes",${tool === 'aggregate_records' ? '"groupBy":"team",' : ''}"filter":${filter}}`
const rpcCall = (tool: string, args: string) =>
  send(
    'POST',
    '/api/v1/mcp',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${tool}","arguments":${args}}}`,
    { accept: 'application/json, text/event-stream' },
    mcpKey,
  )
/** A JSON body nested past maxJsonNesting is refused before any route reads it: 400 naming the bound. */
const bodyTooDeep = (reply: Reply, levels: number) =>
  levels > 128 &&
  reply.status === 400 &&
  body(reply).error === 'invalid_request' &&
  /^Request body nests deeper than 256 levels/.test(body(reply).message)
const toolErrorOf = (reply: Reply) => {
  expect(reply.status, reply.text.slice(0, 300)).toBe(200)
  const result = body(reply).result
  expect(result?.isError, reply.text.slice(0, 300)).toBe(true)
  expect(JSON.parse(result.content[0].text).error).toMatch(/^(invalid_request|validation_error)$/)
}

/** Opens the stream over WebSocket: the refusal is the handshake's answer. */
function wsHandshake(path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}${path}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    })
    socket.once('open', () => {
      socket.close()
      reject(new Error('the stream was opened'))
    })
    socket.once('unexpected-response', (_req, res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => (text += chunk.toString()))
      res.on('end', () => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: new Headers(), text, body: parsed })
      })
    })
    socket.once('error', (err) => reject(err))
  })
}

const cases: Case[] = [
  {
    operation: 'GET /api/v1/collections/{name}/records',
    name: 'records list',
    send: (f) => get(`/api/v1/collections/notes/records?filter=${qs(f)}`),
    refused: queryRefused,
  },
  {
    operation: 'GET /api/v1/collections/{name}/records/aggregate',
    name: 'records aggregate',
    send: (f) => get(`/api/v1/collections/notes/records/aggregate?groupBy=team&filter=${qs(f)}`),
    refused: queryRefused,
  },
  {
    operation: 'GET /api/v1/collections/{name}/stream',
    name: 'realtime stream (SSE)',
    send: (f) =>
      server.request('GET', `/api/v1/collections/notes/stream?filter=${qs(f)}`, {
        token: owner.token,
        headers: { accept: 'text/event-stream' },
      }),
    refused: queryRefused,
  },
  {
    operation: 'GET /api/v1/collections/{name}/stream',
    name: 'realtime stream (WebSocket)',
    send: (f) => wsHandshake(`/api/v1/collections/notes/stream?filter=${qs(f)}`),
    refused: queryRefused,
  },
  {
    operation: 'POST /api/v1/lenses',
    name: 'lens create',
    send: (f) => send('POST', '/api/v1/lenses', `{"name":"deep","collection":"notes","filter":${f}}`),
    refused: saveRefused,
    state: lensesState,
  },
  {
    operation: 'POST /api/v1/views',
    name: 'saved view create',
    send: (f) => send('POST', '/api/v1/views', `{"name":"deep","collection":"notes","shared":true,"filter":${f}}`),
    refused: (reply) => envelope(reply, [400, 422], /^(invalid_request|validation_error)$/),
    state: viewsState,
  },
  {
    operation: 'PATCH /api/v1/views/{id}',
    name: 'saved view update',
    send: (f) => send('PATCH', `/api/v1/views/${viewId}`, `{"filter":${f}}`),
    refused: (reply) => envelope(reply, [400, 422], /^(invalid_request|validation_error)$/),
    state: viewsState,
  },
  {
    operation: 'GET /api/v1/views/{id}/records',
    name: 'saved view records',
    send: (f) => get(`/api/v1/views/${viewId}/records?filter=${qs(f)}`),
    refused: queryRefused,
  },
  {
    operation: 'PATCH /api/v1/lenses/{id}',
    name: 'lens update',
    send: (f) => send('PATCH', `/api/v1/lenses/${lensId}`, `{"filter":${f}}`),
    refused: saveRefused,
    state: lensesState,
  },
  ...['crud_read', 'crud_query', 'crud_update', 'crud_delete', 'crud_action'].map(
    (type): Case => ({
      operation: 'POST /api/v1/automate/flows',
      name: `flow create (${type})`,
      state: flowsState,
      refused: saveRefused,
      send: (f) =>
        send(
          'POST',
          FLOWS,
          `{"name":"deep ${type}","triggerType":"manual","triggerConfig":{},"operations":${flowBody(type, f)}}`,
        ),
    }),
  ),
  {
    operation: 'PATCH /api/v1/automate/flows/{flowId}',
    name: 'flow update',
    send: (f) => send('PATCH', `${FLOWS}/${flowId}`, `{"operations":${flowBody('crud_read', f)}}`),
    refused: saveRefused,
    state: flowsState,
  },
  {
    operation: 'PATCH /api/v1/automate/flows/{flowId}',
    name: 'flow update (trigger config)',
    send: (f) => send('PATCH', `${FLOWS}/${flowId}`, `{"triggerConfig":{"filter":${f}}}`),
    refused: saveRefused,
    state: flowsState,
  },
  {
    operation: 'POST /api/v1/automate/flows/import',
    name: 'flow import',
    state: flowsState,
    refused: saveRefused,
    send: (f) =>
      send(
        'POST',
        `${FLOWS}/import`,
        `{"format":"plinth-flow-v1","name":"deep import","triggerType":"manual","triggerConfig":{},"operations":${flowBody('crud_delete', f)}}`,
      ),
  },
  {
    // The draft reads its filter from the payload: the run resolves it, and the step fails on the bounds before anything writes it back to text.
    operation: 'POST /api/v1/automate/flows/{flowId}/test',
    name: 'flow dry run (filter from the payload)',
    state: recordsState,
    send: (f) => send('POST', `${FLOWS}/${templatedFlowId}/test`, `{"filter":${f}}`),
    refused: (reply) => {
      expect(reply.status, reply.text.slice(0, 300)).toBe(200)
      expect(body(reply).data).toMatchObject({ status: 'failed', error: { code: 'invalid_config', step: 'peek' } })
    },
  },
  {
    operation: 'PUT /api/v1/roles/{id}/grants',
    name: 'role grants (item_filter)',
    send: (f) =>
      send(
        'PUT',
        `/api/v1/roles/${roleId}/grants`,
        `{"grants":[{"resource":"collections/notes","action":"read","item_filter":${f}}]}`,
      ),
    refused: saveRefused,
    state: grantsState,
  },
  ...['search_records', 'aggregate_records'].map(
    (tool): Case => ({
      operation: 'POST /api/v1/mcp/tools/{name}/invoke',
      name: `tool ${tool} over REST`,
      refused: (r) => envelope(r, [400, 413, 422], /^(invalid_request|validation_error|payload_too_large)$/),
      send: (f) =>
        send('POST', `/api/v1/mcp/tools/${tool}/invoke`, `{"arguments":${toolArguments(tool, f)}}`, {}, mcpKey),
    }),
  ),
  ...['search_records', 'aggregate_records'].map(
    (tool): Case => ({
      operation: 'POST /api/v1/mcp',
      name: `tool ${tool} over MCP (tools/call)`,
      refused: toolErrorOf,
      send: (f) => rpcCall(tool, toolArguments(tool, f)),
    }),
  ),
]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  const call = (method: string, path: string, payload: unknown) =>
    server.request(method, path, { token: owner.token, body: payload })
  const made = await call('POST', '/api/v1/collections', {
    name: 'notes',
    fields: [
      { name: 'title', type: 'text', required: false },
      { name: 'team', type: 'text', required: false },
    ],
  })
  expect(made.status, made.text).toBe(201)
  expect((await call('POST', '/api/v1/collections/notes/records', { title: 'kept', team: 'a' })).status).toBe(201)
  const key = await call('POST', '/api/auth/api-keys', {
    label: 'filter limits',
    capabilities: ['collections/*:read', 'schema/*:read'],
  })
  expect(key.status, key.text).toBe(201)
  mcpKey = key.body.raw
  const lens = await call('POST', '/api/v1/lenses', {
    name: 'plain',
    collection: 'notes',
    filter: { title: { _eq: '{{params.title}}' } },
    params: [{ name: 'title', type: 'text', default: 'kept' }],
  })
  expect(lens.status, lens.text).toBe(201)
  lensId = lens.body.data.id
  const view = await call('POST', '/api/v1/views', { name: 'plain', collection: 'notes', shared: true })
  expect(view.status, view.text).toBe(201)
  viewId = view.body.data.id
  const flow = await call('POST', FLOWS, {
    name: 'plain',
    triggerType: 'manual',
    triggerConfig: {},
    operations: [
      {
        key: 'read',
        type: 'crud_read',
        config: { collection: 'notes', filter: { _or: [{ title: '{{$trigger.body.title}}' }, { team: 'a' }] } },
      },
    ],
  })
  expect(flow.status, flow.text).toBe(201)
  flowId = flow.body.data.id
  const templated = await call('POST', FLOWS, {
    name: 'templated',
    triggerType: 'manual',
    triggerConfig: {},
    operations: [
      { key: 'peek', type: 'crud_read', config: { collection: 'notes', filter: '{{$trigger.body.filter}}' } },
    ],
  })
  expect(templated.status, templated.text).toBe(201)
  templatedFlowId = templated.body.data.id
  const role = await call('POST', '/api/v1/roles', { name: 'limited' })
  expect(role.status, role.text).toBe(201)
  roleId = role.body.data.id
}, 60_000)

afterAll(async () => {
  await server?.stop()
})

describe('a filter nested 100, 5,000 or 50,000 levels deep', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: refused in the envelope, never a 500, nothing stored',
    async (_name, c) => {
      for (const levels of LEVELS) {
        for (const shape of SHAPES) {
          const before = await c.state?.()
          const reply = await c.send(deepFilter(levels, shape), levels)
          expect(reply.status, `${c.name} ${levels} ${shape}: ${reply.text.slice(0, 300)}`).not.toBe(500)
          if (!bodyTooDeep(reply, levels)) c.refused(reply)
          if (c.state) expect(await c.state(), `${c.name} ${levels} ${shape} stored something`).toEqual(before)
        }
      }
      const health = await server.request('GET', '/health')
      expect(health.status).toBe(200)
    },
    60_000,
  )

  it('a query filter short enough for the URL still reaches the bounds: 1,400 levels is 400 naming where', async () => {
    for (const c of cases.filter((k) => k.operation?.startsWith('GET '))) {
      const reply = await c.send(deepFilter(1_400, 'mixed'), 1_400)
      expect(reply.status, `${c.name}: ${reply.text.slice(0, 300)}`).toBe(400)
      expect(body(reply)).toMatchObject({
        error: 'invalid_request',
        message: expect.stringContaining('filter nests deeper than 8 levels'),
      })
    }
  })
})

describe('a filter moderately too deep (20 levels) in a saved definition', () => {
  // No trigger type takes a filter: its config is only bounded in depth (64), so it has no row here.
  const saved = cases.filter((c) => c.refused === saveRefused && !c.name.includes('trigger config'))
  it.each(saved.map((c) => [c.name, c] as const))('%s: 422 naming the place, nothing stored', async (_name, c) => {
    const before = await c.state?.()
    const reply = await c.send(deepFilter(20, '_and'), 20)
    saveRefused(reply)
    expect(body(reply).message).toMatch(/nests (deeper than 8|more than 64) levels/)
    if (c.name.startsWith('flow')) expect(body(reply).message).toMatch(/step_one|trigger config/)
    expect(await c.state?.()).toEqual(before)
  })

  it('flow steps name the step and the config path; filters within the bounds, templates and all, still save and run', async () => {
    const refused = await send(
      'POST',
      FLOWS,
      `{"name":"moderate","triggerType":"manual","triggerConfig":{},"operations":${flowBody('crud_read', deepFilter(9, '_or'))}}`,
    )
    saveRefused(refused)
    expect(body(refused).message).toMatch(/^operations\[0\] \(key 'step_one'\) config\.filter: filter\._or\[0\]/)
    expect(body(refused).details).toMatchObject({ step: 'step_one', path: 'operations[0].config.filter' })
    const ok = await server.request('POST', `${FLOWS}/${flowId}/test`, { token: owner.token, body: { title: 'kept' } })
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.data).toMatchObject({
      status: 'completed',
      steps: [{ key: 'read', status: 'completed', output: { count: 1 } }],
    })
    const eight = await send(
      'PATCH',
      `${FLOWS}/${flowId}`,
      `{"operations":${flowBody('crud_read', deepFilter(8, 'mixed'))}}`,
    )
    expect(eight.status, eight.text).toBe(200)
    // A template that resolves to a filter past the bounds fails the step on them (invalid_config), before the records service sees it.
    const run = await send('POST', `${FLOWS}/${templatedFlowId}/test`, `{"filter":${deepFilter(20, '_or')}}`)
    expect(run.status, run.text).toBe(200)
    expect(body(run).data).toMatchObject({
      status: 'failed',
      error: {
        code: 'invalid_config',
        step: 'peek',
        message: expect.stringContaining('filter nests deeper than 8 levels'),
      },
    })
  })
})

describe('coverage', () => {
  it('every operation of the OpenAPI document that takes a filter (query parameter or body property) is in the table', async () => {
    const doc = body(await server.request('GET', '/api/openapi.json'))
    const resolve = (schema: any): any =>
      schema?.$ref
        ? resolve(
            schema.$ref
              .split('/')
              .slice(1)
              .reduce((o: any, k: string) => o[k], doc),
          )
        : schema
    const takesFilter = (schema: any, depth = 0): boolean => {
      const s = resolve(schema)
      if (!s || typeof s !== 'object' || depth > 10) return false
      if (
        Object.entries<any>(s.properties ?? {}).some(
          ([name, child]) => /filter$/i.test(name) || takesFilter(child, depth + 1),
        )
      )
        return true
      return [s.items, s.additionalProperties, ...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].some(
        (child) => typeof child === 'object' && takesFilter(child, depth + 1),
      )
    }
    const found: string[] = []
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op || typeof op !== 'object' || !('responses' in op)) continue
        const inQuery = (op.parameters ?? []).some((p: any) => /filter$/i.test(resolve(p).name))
        const inBody = Object.values<any>(op.requestBody?.content ?? {}).some((content) => takesFilter(content.schema))
        if (inQuery || inBody) found.push(`${method.toUpperCase()} ${path}`)
      }
    }
    // What the walk must see at least (so a broken walk cannot pass by finding nothing).
    expect(found.length).toBeGreaterThanOrEqual(6)
    expect(found).toEqual(
      expect.arrayContaining([
        'GET /api/v1/collections/{name}/records',
        'POST /api/v1/lenses',
        'PUT /api/v1/roles/{id}/grants',
      ]),
    )
    const covered = new Set(cases.map((c) => c.operation))
    expect(
      found.filter((op) => !covered.has(op)),
      'operations taking a filter with no row in the table',
    ).toEqual([])
  })

  it('every operation of the flow catalog with a filter in its config has a flow row in the table', async () => {
    const catalog = body(await get('/api/v1/automate/operations')).data as {
      type: string
      fields: { name: string }[]
    }[]
    const withFilter = catalog.filter((op) => op.fields.some((f) => /filter$/i.test(f.name))).map((op) => op.type)
    expect(withFilter).toEqual(expect.arrayContaining(['crud_read', 'crud_delete']))
    const covered = new Set(cases.map((c) => /^flow create \((\w+)\)$/.exec(c.name)?.[1]))
    expect(
      withFilter.filter((type) => !covered.has(type)),
      'step types taking a filter with no row in the table',
    ).toEqual([])
  })
})
