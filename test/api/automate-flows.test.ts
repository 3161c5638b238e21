import { builtInRoles, VIEWER } from '../../src/modules/access/index.js'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AppError } from '../../src/lib/errors.js'
import type { OperationDefinition, OperationRegistry } from '../../src/modules/operations/index.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, roleId, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { accountWithGrants } from './collections-support.js'

const viewerDefaults = builtInRoles.find((r) => r.name === VIEWER)!.grants.map((g) => ({ ...g }))

/**
 * /api/v1/automate/flows, /assignable-roles (automation spec "Flows", "Credential masking", "runAs
 * rules", "Import rules", "Versioning", "Flow status") over real HTTP: every endpoint and status code,
 * each masking rule, runAs delegation, export and import, the permission table, and bad input leaving
 * nothing written. Quotas are in automate-quotas.test.ts.
 */

const MASK = '\u2022'.repeat(8)
const BASE = '/api/v1/automate/flows'
const secret = (label: string) => `${label}-${randomBytes(9).toString('hex')}`
const WEBHOOK_SECRET = secret('whsec')
const BEARER = secret('bearer')
const PASSWORD = secret('basic')
const DISPATCH = secret('dispatch')
const AUTH_HEADER = `Bearer ${secret('hdr')}`
const ALL_SECRETS = [WEBHOOK_SECRET, BEARER, PASSWORD, DISPATCH, AUTH_HEADER]

// The network operations are not in the first catalog; the masking rules name them, so the test adds them (permissive).
const extra = ['http_request', 'webhook_dispatch', 'graphql_request'].map(
  (type): OperationDefinition => ({
    type,
    category: 'network',
    label: type,
    description: type,
    effects: 'writes',
    configSchema: z.record(z.string(), z.unknown()),
    run: async () => ({}),
  }),
)
function withNetworkOps(registry: OperationRegistry): OperationRegistry {
  const byType = new Map(extra.map((d) => [d.type, d]))
  return {
    prepare: (step, data) => registry.prepare(step, data),
    evaluateCondition: (tree, data) => registry.evaluateCondition(tree, data),
    effectsOf: (step) => (byType.has(step.type) ? 'writes' : registry.effectsOf(step)),
    needsOf: (steps) => registry.needsOf(steps),
    get: (type) => byType.get(type) ?? registry.get(type),
    list: () => [...registry.list(), ...extra],
    checkSteps(steps, options) {
      // The network steps' configs are free-form here: keys are checked across all steps, the rest by the registry.
      const seen = new Set<string>()
      for (const [index, s] of steps.entries()) {
        if (seen.has(s.key))
          throw new AppError('validation_error', `operations[${index}].key: the key is already used`, { step: s.key })
        seen.add(s.key)
      }
      registry.checkSteps(
        steps.filter((s) => !byType.has(s.type)),
        options,
      )
    },
  }
}

let server: TestServer
let owner: Account
let admin: Account
let editor: Account
let viewer: Account
/** system/automate read, create, update (no manage). */
let updater: Account
/** system/automate every action incl. manage, but only collections/* read and system/files read. */
let manager: Account
let readKey: string
const replies: Reply[] = []

const call = async (method: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> => {
  const reply = await server.request(method, path, { token, body })
  replies.push(reply)
  return reply
}

const steps = () => [
  { key: 'set', type: 'set_variable', config: { key: 'x', value: '{{$trigger.body.x}}' } },
  {
    key: 'call',
    type: 'http_request',
    config: {
      url: 'https://example.com',
      headers: { Authorization: AUTH_HEADER, 'X-Trace': 'keep-me' },
      auth: { type: 'bearer', token: BEARER },
    },
  },
  {
    key: 'basic',
    type: 'http_request',
    config: { url: 'https://example.com', auth: { type: 'basic', username: 'u', password: PASSWORD } },
  },
  { key: 'ping', type: 'webhook_dispatch', config: { url: 'https://example.com/hook', secret: DISPATCH } },
  {
    key: 'note',
    type: 'graphql_request',
    config: { url: 'https://example.com/graphql', query: '{ a }', headers: { authorization: AUTH_HEADER } },
  },
]
const validFlow = (extraFields: Record<string, unknown> = {}) => ({
  name: 'Order sync',
  triggerType: 'webhook',
  triggerConfig: { require_auth: true, secret: WEBHOOK_SECRET, allowed_methods: ['POST', 'GET'] },
  operations: steps(),
  ...extraFields,
})
async function createFlow(body: Record<string, unknown> = validFlow(), token = owner.token): Promise<any> {
  const reply = await call('POST', BASE, token, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}
async function publish(id: string, summary = 'v', token = owner.token): Promise<number> {
  const reply = await call('POST', `${BASE}/${id}/publish`, token, { changeSummary: summary })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data.version
}
const stepOf = (flow: any, key: string) => flow.operations.find((s: any) => s.key === key)
async function flowRow(id: string): Promise<any> {
  return server.app.registry.system.db.selectFrom('flows').selectAll().where('id', '=', id).executeTakeFirst()
}
const countRows = async (table: string, column?: string, value?: string): Promise<number> => {
  let q = server.app.registry.system.db.selectFrom(table).select((eb: any) => eb.fn.countAll().as('n'))
  if (column) q = q.where(column, '=', value)
  return Number(((await q.executeTakeFirstOrThrow()) as { n: unknown }).n)
}

beforeAll(async () => {
  server = await startServer({}, { operations: withNetworkOps })
  owner = await signUpOwner(server)
  admin = await createAccount(server, owner.token, { role: 'admin' })
  editor = await createAccount(server, owner.token, { role: 'editor' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  const automate = (actions: string[]) => actions.map((action) => ({ resource: 'system/automate', action }))
  updater = await accountWithGrants(server, owner.token, automate(['read', 'create', 'update']))
  manager = await accountWithGrants(server, owner.token, [
    ...automate(['read', 'create', 'update', 'delete', 'write', 'manage', 'execute']),
    // Everything the viewer holds by default, so the viewer is within the manager's reach.
    ...viewerDefaults,
  ])
  const key = await call('POST', '/api/auth/api-keys', owner.token, {
    label: 'read only',
    capabilities: ['system/automate:read'],
  })
  expect(key.status, key.text).toBe(201)
  readKey = key.body.raw
})
afterAll(async () => {
  // No secret ever reached a log line or the audit log.
  const audit = JSON.stringify(await server.app.registry.system.db.selectFrom('audit_log').selectAll().execute())
  for (const s of ALL_SECRETS) {
    expect(server.logs.join('\n')).not.toContain(s)
    expect(audit).not.toContain(s)
  }
  await server?.stop()
})

describe('POST /flows', () => {
  it('creates a draft: 201 with every field, defaults filled in, options with defaults', async () => {
    const before = new Date(Date.now() - 1000).toISOString()
    const flow = await createFlow(validFlow({ description: 'Syncs orders' }))
    expect(flow).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      projectId: expect.any(String),
      slug: expect.stringMatching(/^order-sync(-\d+)?$/),
      name: 'Order sync',
      description: 'Syncs orders',
      icon: 'bolt',
      color: '#6750a4',
      status: 'draft',
      triggerType: 'webhook',
      collections: ['*'],
      createdBy: owner.id,
      runAs: 'triggering_user',
      currentVersion: 0,
      publishedVersion: null,
      lastRunAt: null,
      runCount: 0,
      errorCount: 0,
      publishedOperations: null,
      options: {
        timeout_ms: 30000,
        max_retries: 0,
        concurrency: 'sequential',
        error_handling: 'stop_on_first',
        log_level: 'full',
      },
    })
    expect(flow.triggerConfig).toMatchObject({ require_auth: true, allowed_methods: ['POST', 'GET'], ip_allowlist: [] })
    expect(flow.createdAt >= before).toBe(true)
    expect(flow.webhookEndpoint).toEqual({
      url: `${server.url}/api/v1/automate/webhook/${flow.webhookEndpoint.token}`,
      token: expect.stringMatching(/^[\w-]{20,}$/),
      methods: ['POST', 'GET'],
    })
    const row = await flowRow(flow.id)
    expect(row.status).toBe('draft')
    expect(row.webhook_token).toBe(flow.webhookEndpoint.token)
  })

  it('webhookEndpoint is null for flows not triggered by a webhook', async () => {
    const flow = await createFlow({ name: 'Manual one', triggerType: 'manual', triggerConfig: {}, operations: [] })
    expect(flow.webhookEndpoint).toBeNull()
    expect(flow.triggerConfig).toMatchObject({ manual_type: 'global', selection: 'none' })
  })

  it('derives unique slugs from the name', async () => {
    const a = await createFlow({ name: 'Same Name!', triggerType: 'manual', triggerConfig: {}, operations: [] })
    const b = await createFlow({ name: 'Same Name!', triggerType: 'manual', triggerConfig: {}, operations: [] })
    expect(a.slug).toBe('same-name')
    expect(b.slug).toBe('same-name-2')
  })

  describe('bad input is refused and writes nothing', () => {
    const ok = () => validFlow()
    const cases: { name: string; body: () => unknown; status?: number; path?: string }[] = [
      { name: 'runAs on create', body: () => ({ ...ok(), runAs: 'triggering_user' }), path: 'runAs' },
      { name: 'no name', body: () => ({ ...ok(), name: undefined }), path: 'name' },
      { name: 'empty name', body: () => ({ ...ok(), name: '   ' }), path: 'name' },
      { name: 'name of 201 characters', body: () => ({ ...ok(), name: 'x'.repeat(201) }), path: 'name' },
      { name: 'no triggerType', body: () => ({ ...ok(), triggerType: undefined }), path: 'triggerType' },
      { name: 'unknown triggerType', body: () => ({ ...ok(), triggerType: 'telepathy' }), path: 'triggerType' },
      { name: 'no operations', body: () => ({ ...ok(), operations: undefined }), path: 'operations' },
      { name: 'no triggerConfig', body: () => ({ ...ok(), triggerConfig: undefined }), path: 'triggerConfig' },
      {
        name: 'triggerConfig key the type does not know',
        body: () => ({ ...ok(), triggerConfig: { bogus: 1 } }),
        path: 'triggerConfig',
      },
      {
        name: 'webhook method not allowed',
        body: () => ({ ...ok(), triggerConfig: { allowed_methods: ['TRACE'] } }),
        path: 'triggerConfig.allowed_methods.0',
      },
      {
        name: 'event trigger without events',
        body: () => ({ ...ok(), triggerType: 'event_action', triggerConfig: { events: [] } }),
        path: 'triggerConfig.events',
      },
      {
        name: 'unknown operation type',
        body: () => ({ ...ok(), operations: [{ key: 'a', type: 'teleport', config: {} }] }),
      },
      {
        name: 'duplicate step keys',
        body: () => ({
          ...ok(),
          operations: [
            { key: 'a', type: 'log', config: { message: 'm' } },
            { key: 'a', type: 'log', config: { message: 'm' } },
          ],
        }),
      },
      {
        name: 'bad step key',
        body: () => ({ ...ok(), operations: [{ key: '1 bad key', type: 'log', config: { message: 'm' } }] }),
        path: 'operations.0.key',
      },
      {
        name: 'broken template',
        body: () => ({ ...ok(), operations: [{ key: 'a', type: 'log', config: { message: '{{ $trigger.body' } }] }),
      },
      {
        name: 'template with an unknown root',
        body: () => ({ ...ok(), operations: [{ key: 'a', type: 'log', config: { message: '{{$secrets.x}}' } }] }),
      },
      {
        name: "config that does not fit the operation's schema",
        body: () => ({ ...ok(), operations: [{ key: 'a', type: 'log', config: { message: 'm', level: 'shout' } }] }),
      },
      {
        name: 'config with a field the operation does not know',
        body: () => ({ ...ok(), operations: [{ key: 'a', type: 'log', config: { message: 'm', colour: 'red' } }] }),
      },
      {
        name: 'condition that is not a rule tree',
        body: () => ({
          ...ok(),
          operations: [{ key: 'a', type: 'log', config: { message: 'm' }, condition: 'sometimes' }],
        }),
      },
      {
        name: 'bad onError',
        body: () => ({
          ...ok(),
          operations: [{ key: 'a', type: 'log', config: { message: 'm' }, onError: 'explode' }],
        }),
        path: 'operations.0.onError',
      },
      { name: 'bad option value', body: () => ({ ...ok(), options: { timeout_ms: 5 } }), path: 'options.timeout_ms' },
      { name: 'unknown option', body: () => ({ ...ok(), options: { turbo: true } }) },
      { name: 'bad colour', body: () => ({ ...ok(), color: 'purple' }), path: 'color' },
      { name: 'bad icon', body: () => ({ ...ok(), icon: 'Not An Icon!' }), path: 'icon' },
      { name: 'unknown field', body: () => ({ ...ok(), surprise: 1 }) },
      { name: 'collections not an array', body: () => ({ ...ok(), collections: 'posts' }), path: 'collections' },
      { name: 'operations not an array', body: () => ({ ...ok(), operations: { a: 1 } }), path: 'operations' },
      { name: 'a JSON array body', body: () => [ok()], status: 400 },
    ]
    for (const c of cases) {
      it(c.name, async () => {
        const before = await countRows('flows')
        const reply = await call('POST', BASE, owner.token, c.body())
        expect(reply.status, reply.text).toBe(c.status ?? 422)
        expect(reply.body.error).toBe(c.status === 400 ? 'invalid_request' : 'validation_error')
        if (c.path)
          expect(
            reply.body.message.startsWith(c.path) || JSON.stringify(reply.body.details).includes(c.path),
            reply.text,
          ).toBe(true)
        expect(await countRows('flows')).toBe(before)
      })
    }

    it('malformed JSON is 400 and writes nothing', async () => {
      const before = await countRows('flows')
      const reply = await server.request('POST', BASE, {
        token: owner.token,
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      })
      expect(reply.status).toBe(400)
      expect(await countRows('flows')).toBe(before)
    })

    it('a body that is not JSON is 415 and writes nothing', async () => {
      const before = await countRows('flows')
      const reply = await server.request('POST', BASE, {
        token: owner.token,
        rawBody: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expect(reply.status).toBe(415)
      expect(reply.body.error).toBe('unsupported_media_type')
      expect(await countRows('flows')).toBe(before)
    })

    it('an error names the step key and the config path', async () => {
      const reply = await call('POST', BASE, owner.token, {
        ...ok(),
        operations: [
          { key: 'first', type: 'log', config: { message: 'm' } },
          { key: 'second', type: 'log', config: { message: '{{ nope' } },
        ],
      })
      expect(reply.status).toBe(422)
      expect(reply.body.message).toContain('operations[1]')
      expect(reply.body.message).toContain('config.message')
      expect(reply.text).toContain('second')
      const schema = await call('POST', BASE, owner.token, {
        ...ok(),
        operations: [
          { key: 'first', type: 'log', config: { message: 'm' } },
          { key: 'loud', type: 'log', config: { message: 'm', level: 'shout' } },
        ],
      })
      expect(schema.status).toBe(422)
      expect(schema.body.message).toContain('operations[1]')
      expect(schema.body.message).toContain('config.level')
      expect(schema.text).toContain('loud')
    })
  })
})

it('the worked flow of docs/automation.md saves, publishes and activates', async () => {
  const flow = await createFlow({
    name: 'Double it',
    triggerType: 'webhook',
    triggerConfig: { allowed_methods: ['POST'] },
    operations: [
      { key: 'qty', type: 'set_variable', config: { key: 'qty', value: '{{$trigger.body.qty}}' } },
      { key: 'double', type: 'math', config: { operation: 'formula', formula: '{{$steps.qty}} * 2' } },
      { key: 'say', type: 'log', config: { message: 'doubled to {{$steps.double.result}}' } },
    ],
  })
  expect(await publish(flow.id, 'first')).toBe(1)
  expect((await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })).status).toBe(200)
})

describe('credential masking', () => {
  let flow: any
  beforeAll(async () => {
    flow = await createFlow(validFlow({ name: 'Masked' }))
    await publish(flow.id, 'first')
  })

  it('holders of update see real values on list, detail (publishedOperations too) and version read', async () => {
    for (const token of [owner.token, admin.token, updater.token]) {
      const detail = (await call('GET', `${BASE}/${flow.id}`, token)).body.data
      expect(detail.triggerConfig.secret).toBe(WEBHOOK_SECRET)
      expect(stepOf(detail, 'call').config.auth.token).toBe(BEARER)
      expect(detail.publishedOperations.find((s: any) => s.key === 'ping').config.secret).toBe(DISPATCH)
      const listed = (await call('GET', BASE, token)).body.data.find((f: any) => f.id === flow.id)
      expect(stepOf(listed, 'basic').config.auth.password).toBe(PASSWORD)
      const version = (await call('GET', `${BASE}/${flow.id}/versions/1`, token)).body.data
      expect(version.snapshot.triggerConfig.secret).toBe(WEBHOOK_SECRET)
    }
  })

  it('read-only callers (editor, a read key) never see them; header names survive, other values too', async () => {
    for (const token of [editor.token, readKey]) {
      for (const path of [`${BASE}/${flow.id}`, BASE, `${BASE}/${flow.id}/versions/1`]) {
        const reply = await call('GET', path, token)
        expect(reply.status, reply.text).toBe(200)
        for (const s of ALL_SECRETS) expect(reply.text).not.toContain(s)
        expect(reply.text).toContain(MASK)
      }
      const detail = (await call('GET', `${BASE}/${flow.id}`, token)).body.data
      expect(detail.triggerConfig.secret).toBe(MASK)
      expect(stepOf(detail, 'call').config).toEqual({
        url: 'https://example.com',
        headers: { Authorization: MASK, 'X-Trace': 'keep-me' },
        auth: { type: 'bearer', token: MASK },
      })
      expect(stepOf(detail, 'basic').config.auth).toEqual({ type: 'basic', username: 'u', password: MASK })
      expect(stepOf(detail, 'ping').config.secret).toBe(MASK)
      expect(stepOf(detail, 'note').config.headers).toEqual({ authorization: MASK })
      expect(detail.publishedOperations.find((s: any) => s.key === 'call').config.auth.token).toBe(MASK)
    }
  })

  it('export masks for everyone, the owner too', async () => {
    for (const token of [owner.token, editor.token]) {
      const reply = await call('GET', `${BASE}/${flow.id}/export`, token)
      expect(reply.status).toBe(200)
      for (const s of ALL_SECRETS) expect(reply.text).not.toContain(s)
      expect(reply.body.data).toMatchObject({
        format: 'plinth-flow-v1',
        slug: flow.slug,
        name: 'Masked',
        triggerType: 'webhook',
        collections: ['*'],
      })
      expect(Object.keys(reply.body.data).sort()).toEqual([
        'collections',
        'color',
        'description',
        'format',
        'icon',
        'name',
        'operations',
        'options',
        'slug',
        'triggerConfig',
        'triggerType',
      ])
    }
  })

  it('PATCH with masks keeps every stored credential (matched by step key, even after reordering)', async () => {
    const masked = (await call('GET', `${BASE}/${flow.id}`, editor.token)).body.data
    const reordered = [...masked.operations].reverse()
    const reply = await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      operations: reordered,
      triggerConfig: masked.triggerConfig,
    })
    expect(reply.status, reply.text).toBe(200)
    const stored = JSON.parse((await flowRow(flow.id)).operations)
    expect(stored.map((s: any) => s.key)).toEqual(['note', 'ping', 'basic', 'call', 'set'])
    expect(stepOf({ operations: stored }, 'call').config).toEqual({
      url: 'https://example.com',
      headers: { Authorization: AUTH_HEADER, 'X-Trace': 'keep-me' },
      auth: { type: 'bearer', token: BEARER },
    })
    expect(stepOf({ operations: stored }, 'basic').config.auth.password).toBe(PASSWORD)
    expect(stepOf({ operations: stored }, 'ping').config.secret).toBe(DISPATCH)
    expect(stepOf({ operations: stored }, 'note').config.headers.authorization).toBe(AUTH_HEADER)
    expect(JSON.parse((await flowRow(flow.id)).trigger_config).secret).toBe(WEBHOOK_SECRET)
  })

  it('a mask on a new step key is dropped; a real value rotates the credential', async () => {
    const rotated = secret('rotated')
    const reply = await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      operations: [
        {
          key: 'call',
          type: 'http_request',
          config: { url: 'https://example.com', auth: { type: 'bearer', token: rotated } },
        },
        {
          key: 'fresh',
          type: 'webhook_dispatch',
          config: { url: 'https://example.com', secret: MASK, headers: { Authorization: MASK } },
        },
      ],
      triggerConfig: { require_auth: true, secret: MASK },
    })
    expect(reply.status, reply.text).toBe(200)
    const stored = JSON.parse((await flowRow(flow.id)).operations)
    expect(stored[0].config.auth.token).toBe(rotated)
    expect(stored[1].config).toEqual({ url: 'https://example.com', headers: {} })
    expect(JSON.parse((await flowRow(flow.id)).trigger_config).secret).toBe(WEBHOOK_SECRET)
    expect(reply.text).toContain(rotated)
  })

  it('masks on create are dropped (nothing stored)', async () => {
    const created = await createFlow({
      name: 'From masks',
      triggerType: 'webhook',
      triggerConfig: { secret: MASK },
      operations: [{ key: 'p', type: 'webhook_dispatch', config: { url: 'https://x.example', secret: MASK } }],
    })
    const row = await flowRow(created.id)
    expect(JSON.parse(row.trigger_config).secret).toBeUndefined()
    expect(JSON.parse(row.operations)[0].config).toEqual({ url: 'https://x.example' })
    expect(row.operations).not.toContain(MASK)
  })

  it('a trigger type change drops a masked secret (nothing stored for the new type)', async () => {
    const created = await createFlow()
    const reply = await call('PATCH', `${BASE}/${created.id}`, owner.token, {
      triggerType: 'manual',
      triggerConfig: {},
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.webhookEndpoint).toBeNull()
    expect((await flowRow(created.id)).trigger_config).not.toContain(WEBHOOK_SECRET)
  })
})

describe('GET /flows/:id, PATCH, DELETE', () => {
  it('404 for an unknown flow on every flow route', async () => {
    const id = 'f'.repeat(32)
    for (const [method, path, body] of [
      ['GET', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`, { name: 'x' }],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/duplicate`, {}],
      ['GET', `${BASE}/${id}/export`],
      ['PATCH', `${BASE}/${id}/status`, { status: 'inactive' }],
      ['POST', `${BASE}/${id}/publish`, {}],
      ['GET', `${BASE}/${id}/versions`],
      ['GET', `${BASE}/${id}/versions/1`],
      ['POST', `${BASE}/${id}/rollback/1`],
    ] as [string, string, unknown?][]) {
      const reply = await call(method, path, owner.token, body)
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(404)
      expect(reply.body.error).toBe('not_found')
    }
  })

  it('PATCH changes what is sent and keeps the rest; a bad patch writes nothing', async () => {
    const flow = await createFlow({ name: 'Patch me', triggerType: 'manual', triggerConfig: {}, operations: [] })
    const reply = await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      name: 'Patched',
      options: { log_level: 'none' },
      collections: ['posts'],
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({
      name: 'Patched',
      collections: ['posts'],
      triggerType: 'manual',
      slug: flow.slug,
    })
    expect(reply.body.data.options).toEqual({
      timeout_ms: 30000,
      max_retries: 0,
      concurrency: 'sequential',
      error_handling: 'stop_on_first',
      log_level: 'none',
    })
    // Options sent are merged over those stored.
    const merged = await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      options: { timeout_ms: 5000, concurrency: 3 },
    })
    expect(merged.body.data.options).toEqual({
      timeout_ms: 5000,
      max_retries: 0,
      concurrency: 3,
      error_handling: 'stop_on_first',
      log_level: 'none',
    })
    const before = await flowRow(flow.id)
    for (const body of [
      { options: { timeout_ms: 1 } },
      { options: { nope: 1 } },
      { name: '' },
      { operations: [{ key: 'a', type: 'nope', config: {} }] },
      { runAs: 'somebody' },
      { status: 'active' },
      { triggerConfig: { bogus: true } },
    ]) {
      const bad = await call('PATCH', `${BASE}/${flow.id}`, owner.token, body)
      expect(bad.status, bad.text).toBe(422)
      expect(await flowRow(flow.id)).toEqual(before)
    }
  })

  it('DELETE removes the flow with its versions, runs and step logs; the webhook token resolves to nothing', async () => {
    const flow = await createFlow()
    await publish(flow.id)
    const db = server.app.registry.system.db
    await db
      .insertInto('flow_runs')
      .values({
        id: 'r'.repeat(32),
        project_id: flow.projectId,
        flow_id: flow.id,
        version: 1,
        status: 'completed',
        trigger_type: 'webhook',
        trigger: '{}',
        acting: '{}',
        created_at: 1,
      })
      .execute()
    await db
      .insertInto('flow_step_logs')
      .values({
        run_id: 'r'.repeat(32),
        position: 0,
        project_id: flow.projectId,
        step_key: 'set',
        type: 'set_variable',
        status: 'completed',
        started_at: 1,
        duration_ms: 1,
      })
      .execute()
    const reply = await call('DELETE', `${BASE}/${flow.id}`, owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({ success: true })
    expect(await flowRow(flow.id)).toBeUndefined()
    expect(await countRows('flow_versions', 'flow_id', flow.id)).toBe(0)
    expect(await countRows('flow_runs', 'flow_id', flow.id)).toBe(0)
    expect(await countRows('flow_step_logs', 'run_id', 'r'.repeat(32))).toBe(0)
    expect(await server.app.services.automate.lookup.byWebhookToken(flow.webhookEndpoint.token)).toBeNull()
    expect((await call('GET', `${BASE}/${flow.id}`, owner.token)).status).toBe(404)
  })
})

describe('versions, publish, rollback, status', () => {
  it('publish makes immutable versions numbered from 1; versions list newest first with their fields', async () => {
    const flow = await createFlow({
      name: 'Versioned',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'a', type: 'log', config: { message: 'one' } }],
    })
    expect(await publish(flow.id, 'first')).toBe(1)
    await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      operations: [{ key: 'a', type: 'log', config: { message: 'two' } }],
    })
    expect(await publish(flow.id, 'second')).toBe(2)
    const noSummary = await call('POST', `${BASE}/${flow.id}/publish`, owner.token)
    expect(noSummary.status, noSummary.text).toBe(200)
    expect(noSummary.body).toEqual({ data: { version: 3, warnings: [] } })
    const versions = (await call('GET', `${BASE}/${flow.id}/versions`, editor.token)).body.data
    expect(versions.map((v: any) => v.version)).toEqual([3, 2, 1])
    expect(versions[2]).toEqual({
      version: 1,
      changeSummary: 'first',
      createdAt: expect.any(String),
      createdBy: owner.id,
    })
    const v1 = (await call('GET', `${BASE}/${flow.id}/versions/1`, owner.token)).body.data
    expect(v1.snapshot.operations[0].config.message).toBe('one')
    expect(v1.snapshot).toMatchObject({
      name: 'Versioned',
      triggerType: 'manual',
      runAs: 'triggering_user',
      collections: ['*'],
    })
    const detail = (await call('GET', `${BASE}/${flow.id}`, owner.token)).body.data
    expect(detail).toMatchObject({ currentVersion: 3, publishedVersion: 3 })
    expect((await call('GET', `${BASE}/${flow.id}/versions/9`, owner.token)).status).toBe(404)
    expect((await call('GET', `${BASE}/${flow.id}/versions/zero`, owner.token)).status).toBe(400)
    const long = await call('POST', `${BASE}/${flow.id}/publish`, owner.token, { changeSummary: 'x'.repeat(1001) })
    expect(long.status).toBe(422)
    expect(await countRows('flow_versions', 'flow_id', flow.id)).toBe(3)
  })

  it('rollback overwrites the draft and the published version (manage only)', async () => {
    const flow = await createFlow({
      name: 'Rolled',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'a', type: 'log', config: { message: 'one' } }],
    })
    await publish(flow.id)
    await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      name: 'Rolled later',
      operations: [{ key: 'a', type: 'log', config: { message: 'two' } }],
    })
    await publish(flow.id)
    expect((await call('POST', `${BASE}/${flow.id}/rollback/1`, updater.token)).status).toBe(403)
    const reply = await call('POST', `${BASE}/${flow.id}/rollback/1`, manager.token)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({ name: 'Rolled', publishedVersion: 1, currentVersion: 2 })
    expect(reply.body.data.operations[0].config.message).toBe('one')
    expect(reply.body.data.publishedOperations[0].config.message).toBe('one')
    expect(
      (await server.app.services.automate.lookup.byId(flow.projectId, flow.id))?.published?.operations[0]?.config
        .message,
    ).toBe('one')
    expect((await call('POST', `${BASE}/${flow.id}/rollback/7`, manager.token)).status).toBe(404)
  })

  it('status: activation needs a published version (409); active ↔ inactive; → draft allowed', async () => {
    const flow = await createFlow({ name: 'Status', triggerType: 'manual', triggerConfig: {}, operations: [] })
    const early = await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })
    expect(early.status).toBe(409)
    expect(early.body.error).toBe('conflict')
    expect(early.body.message).toMatch(/Publish/)
    expect((await flowRow(flow.id)).status).toBe('draft')
    await publish(flow.id)
    // The owner published it: its runs would act within the owner's rights, beyond the updater's (decision 045).
    const borrowed = await call('PATCH', `${BASE}/${flow.id}/status`, updater.token, { status: 'active' })
    expect(borrowed.status, borrowed.text).toBe(403)
    expect((await call('POST', `${BASE}/${flow.id}/publish`, updater.token, { changeSummary: 'mine' })).status).toBe(
      200,
    )
    for (const status of ['active', 'inactive', 'active', 'draft', 'inactive']) {
      const reply = await call('PATCH', `${BASE}/${flow.id}/status`, updater.token, { status })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data.status).toBe(status)
      expect((await flowRow(flow.id)).status).toBe(status)
    }
    expect((await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'paused' })).status).toBe(422)
    expect((await call('PATCH', `${BASE}/${flow.id}/status`, editor.token, { status: 'active' })).status).toBe(403)
  })

  it('activating a schedule with an invalid time zone is 422; a valid one activates and is listed for triggers', async () => {
    const flow = await createFlow({
      name: 'Nightly',
      triggerType: 'schedule',
      triggerConfig: { cron: '0 3 * * *', timezone: 'Mars/Olympus' },
      operations: [],
    })
    await publish(flow.id)
    const bad = await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })
    expect(bad.status, bad.text).toBe(422)
    expect(bad.body.error).toBe('validation_error')
    expect((await flowRow(flow.id)).status).toBe('draft')
    await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      triggerConfig: { cron: '0 3 * * *', timezone: 'Europe/Berlin' },
    })
    await publish(flow.id)
    const good = await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })
    expect(good.status, good.text).toBe(200)
    const active = await server.app.services.automate.lookup.activeByTrigger(flow.projectId, 'schedule')
    expect(active.map((f) => f.id)).toContain(flow.id)
    await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'inactive' })
    expect(
      (await server.app.services.automate.lookup.activeByTrigger(flow.projectId, 'schedule')).map((f) => f.id),
    ).not.toContain(flow.id)
  })

  it('an active schedule flow: publishing an invalid time zone is 422 and keeps the published version; a changed draft trigger does not unlist it', async () => {
    const flow = await createFlow({
      name: 'Hourly',
      triggerType: 'schedule',
      triggerConfig: { cron: '0 * * * *', timezone: 'UTC' },
      operations: [],
    })
    await publish(flow.id)
    expect((await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })).status).toBe(200)
    await call('PATCH', `${BASE}/${flow.id}`, owner.token, {
      triggerConfig: { cron: '0 * * * *', timezone: 'Mars/Olympus' },
    })
    const bad = await call('POST', `${BASE}/${flow.id}/publish`, owner.token, { changeSummary: 'bad zone' })
    expect(bad.status, bad.text).toBe(422)
    expect((await flowRow(flow.id)).published_version).toBe(1)
    // The draft now names another trigger; the published schedule is what runs, so it stays listed as one.
    await call('PATCH', `${BASE}/${flow.id}`, owner.token, { triggerType: 'webhook', triggerConfig: {} })
    const schedules = await server.app.services.automate.lookup.activeByTrigger(flow.projectId, 'schedule')
    expect(schedules.map((f) => f.id)).toContain(flow.id)
    const webhooks = await server.app.services.automate.lookup.activeByTrigger(flow.projectId, 'webhook')
    expect(webhooks.map((f) => f.id)).not.toContain(flow.id)
    const across = await server.app.services.automate.lookup.activeByTriggerAcrossProjects('schedule')
    expect(across.map((f) => f.id)).toContain(flow.id)
    await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'inactive' })
  })
})

describe('runAs', () => {
  let flow: any
  beforeAll(async () => {
    flow = await createFlow({ name: 'Delegated', triggerType: 'manual', triggerConfig: {}, operations: [] })
  })
  const setRunAs = (runAs: string, token: string) => call('PATCH', `${BASE}/${flow.id}`, token, { runAs })

  it('triggering_user needs only update', async () => {
    const reply = await setRunAs('triggering_user', updater.token)
    expect(reply.status, reply.text).toBe(200)
  })

  it('an editor granted update but not manage cannot set flow_owner or a role (403), nothing written', async () => {
    for (const runAs of ['flow_owner', `role:${await roleId(server, owner.token, 'viewer')}`]) {
      const reply = await setRunAs(runAs, updater.token)
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.error).toBe('forbidden')
      expect((await flowRow(flow.id)).run_as).toBe('triggering_user')
    }
  })

  it('a manager may delegate a role within reach, not one above them (403)', async () => {
    const viewerRole = await roleId(server, owner.token, 'viewer')
    const ok = await setRunAs(`role:${viewerRole}`, manager.token)
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.data.runAs).toBe(`role:${viewerRole}`)
    for (const name of ['editor', 'admin']) {
      const reply = await setRunAs(`role:${await roleId(server, owner.token, name)}`, manager.token)
      expect(reply.status, reply.text).toBe(403)
      expect(reply.body.message).toMatch(/runAs/)
      expect((await flowRow(flow.id)).run_as).toBe(`role:${viewerRole}`)
    }
  })

  it('flow_owner is refused when the owner outranks the caller, allowed for an administrator', async () => {
    // The owner (super_admin) created the flow.
    expect((await setRunAs('flow_owner', manager.token)).status).toBe(403)
    const reply = await setRunAs('flow_owner', owner.token)
    expect(reply.status, reply.text).toBe(200)
    expect((await flowRow(flow.id)).run_as).toBe('flow_owner')
  })

  it('a manager may set flow_owner on their own flow; an unknown role is 422', async () => {
    const own = await createFlow(
      { name: 'Mine', triggerType: 'manual', triggerConfig: {}, operations: [] },
      manager.token,
    )
    expect((await call('PATCH', `${BASE}/${own.id}`, manager.token, { runAs: 'flow_owner' })).status).toBe(200)
    const unknown = await call('PATCH', `${BASE}/${own.id}`, owner.token, { runAs: 'role:doesnotexist' })
    expect(unknown.status).toBe(422)
  })

  it('a delegated flow may be changed only by a caller who could set its runAs; dropping the delegation is open to update', async () => {
    const viewerRole = await roleId(server, owner.token, 'viewer')
    const editorRole = await roleId(server, owner.token, 'editor')
    const delegated = await createFlow({
      name: 'Delegated to viewer',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [],
    })
    expect(
      (await call('PATCH', `${BASE}/${delegated.id}`, manager.token, { runAs: `role:${viewerRole}` })).status,
    ).toBe(200)
    const before = await flowRow(delegated.id)
    const steps = [{ key: 'x', type: 'log', config: { message: 'as viewer' } }]
    expect((await call('PATCH', `${BASE}/${delegated.id}`, updater.token, { operations: steps })).status).toBe(403)
    expect(
      (
        await call('POST', `${BASE}/import?flowId=${delegated.id}`, updater.token, {
          format: 'plinth-flow-v1',
          name: 'x',
          triggerType: 'manual',
          triggerConfig: {},
          operations: steps,
        })
      ).status,
    ).toBe(403)
    expect(await flowRow(delegated.id)).toEqual(before)
    expect((await call('PATCH', `${BASE}/${delegated.id}`, manager.token, { operations: steps })).status).toBe(200)
    // Above the manager: an administrator's delegation to editor.
    expect((await call('PATCH', `${BASE}/${delegated.id}`, admin.token, { runAs: `role:${editorRole}` })).status).toBe(
      200,
    )
    const held = await flowRow(delegated.id)
    expect((await call('PATCH', `${BASE}/${delegated.id}`, manager.token, { name: 'mine now' })).status).toBe(403)
    expect(
      (
        await call('POST', `${BASE}/import?flowId=${delegated.id}`, manager.token, {
          format: 'plinth-flow-v1',
          name: 'x',
          triggerType: 'manual',
          triggerConfig: {},
          operations: [],
        })
      ).status,
    ).toBe(403)
    expect(await flowRow(delegated.id)).toEqual(held)
    // Back to triggering_user: anyone with update may drop a delegation.
    const dropped = await call('PATCH', `${BASE}/${delegated.id}`, updater.token, { runAs: 'triggering_user' })
    expect(dropped.status, dropped.text).toBe(200)
    expect((await flowRow(delegated.id)).run_as).toBe('triggering_user')
  })

  it('GET /assignable-roles: roles the caller may delegate; none without manage; 401 anonymous', async () => {
    const mine = (await call('GET', '/api/v1/automate/assignable-roles', manager.token)).body.data.map(
      (r: any) => r.name,
    )
    expect(mine).toContain('viewer')
    expect(mine).not.toContain('editor')
    expect(mine).not.toContain('admin')
    expect(mine).not.toContain('super_admin')
    const admins = (await call('GET', '/api/v1/automate/assignable-roles', admin.token)).body.data
    expect(admins.map((r: any) => r.name)).toEqual(expect.arrayContaining(['admin', 'editor', 'viewer']))
    expect(admins.map((r: any) => r.name)).not.toContain('super_admin')
    expect(admins[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      description: expect.any(String),
      runAs: `role:${admins[0].id}`,
    })
    expect((await call('GET', '/api/v1/automate/assignable-roles', viewer.token)).body).toEqual({ data: [] })
    expect((await call('GET', '/api/v1/automate/assignable-roles', undefined)).status).toBe(401)
  })

  it('duplicate resets runAs to triggering_user; rollback restores a published runAs only for a caller who may set it', async () => {
    const copy = await call('POST', `${BASE}/${flow.id}/duplicate`, owner.token, {})
    expect(copy.status).toBe(201)
    expect(copy.body.data.runAs).toBe('triggering_user')
    await publish(flow.id, 'as owner') // runAs flow_owner frozen
    await setRunAs('triggering_user', owner.token)
    const versions = (await call('GET', `${BASE}/${flow.id}/versions`, owner.token)).body.data
    const refused = await call('POST', `${BASE}/${flow.id}/rollback/${versions[0].version}`, manager.token)
    expect(refused.status, refused.text).toBe(403)
    expect((await flowRow(flow.id)).run_as).toBe('triggering_user')
  })
})

describe('FlowLookup (what runs and triggers read)', () => {
  it('tells change listeners after create, change, publish, status and delete; real values, published definition', async () => {
    const seen: { flowId: string; status: string | null; published: number | null }[] = []
    const remove = server.app.services.automate.lookup.changes.add(async (_projectId, flowId, flow) => {
      seen.push({ flowId, status: flow?.status ?? null, published: flow?.publishedVersion ?? null })
    })
    try {
      const flow = await createFlow()
      await call('PATCH', `${BASE}/${flow.id}`, owner.token, { name: 'Renamed' })
      await publish(flow.id)
      await call('PATCH', `${BASE}/${flow.id}/status`, owner.token, { status: 'active' })
      const byToken = await server.app.services.automate.lookup.byWebhookToken(flow.webhookEndpoint.token)
      expect(byToken).toMatchObject({
        id: flow.id,
        status: 'active',
        publishedVersion: 1,
        webhookToken: flow.webhookEndpoint.token,
        createdBy: owner.id,
      })
      expect(byToken?.published?.triggerConfig.secret).toBe(WEBHOOK_SECRET)
      expect(byToken?.draft.name).toBe('Renamed')
      const across = await server.app.services.automate.lookup.activeByTriggerAcrossProjects('webhook')
      expect(across.map((f) => f.id)).toContain(flow.id)
      await call('DELETE', `${BASE}/${flow.id}`, owner.token)
      expect(seen.filter((e) => e.flowId === flow.id)).toEqual([
        { flowId: flow.id, status: 'draft', published: null },
        { flowId: flow.id, status: 'draft', published: null },
        { flowId: flow.id, status: 'draft', published: 1 },
        { flowId: flow.id, status: 'active', published: 1 },
        { flowId: flow.id, status: null, published: null },
      ])
      expect(
        (await server.app.services.automate.lookup.activeByTriggerAcrossProjects('webhook')).map((f) => f.id),
      ).not.toContain(flow.id)
    } finally {
      remove()
    }
  })
})

describe('duplicate, export, import', () => {
  it('duplicate copies the draft into a new draft with a new slug and token', async () => {
    const flow = await createFlow()
    await publish(flow.id)
    const reply = await call('POST', `${BASE}/${flow.id}/duplicate`, owner.token, { name: 'Copy of sync' })
    expect(reply.status, reply.text).toBe(201)
    const copy = reply.body.data
    expect(copy).toMatchObject({
      name: 'Copy of sync',
      slug: 'copy-of-sync',
      status: 'draft',
      publishedVersion: null,
      currentVersion: 0,
    })
    expect(copy.id).not.toBe(flow.id)
    expect(copy.webhookEndpoint.token).not.toBe(flow.webhookEndpoint.token)
    expect(JSON.parse((await flowRow(copy.id)).operations)).toEqual(JSON.parse((await flowRow(flow.id)).operations))
    const unnamed = await call('POST', `${BASE}/${flow.id}/duplicate`, owner.token)
    expect(unnamed.status, unnamed.text).toBe(201)
    expect(unnamed.body.data.name).toBe(`${flow.name} (copy)`)
  })

  it('import of an unchanged export into the same project is 409; without slug a fresh one; masked credentials dropped', async () => {
    const flow = await createFlow(validFlow({ name: 'Exported' }))
    const doc = (await call('GET', `${BASE}/${flow.id}/export`, owner.token)).body.data
    const before = await countRows('flows')
    const conflict = await call('POST', `${BASE}/import`, owner.token, doc)
    expect(conflict.status, conflict.text).toBe(409)
    expect(conflict.body.error).toBe('conflict')
    expect(await countRows('flows')).toBe(before)
    const { slug: _slug, ...noSlug } = doc
    const copy = await call('POST', `${BASE}/import`, owner.token, noSlug)
    expect(copy.status, copy.text).toBe(201)
    expect(copy.body.data).toMatchObject({
      name: 'Exported',
      slug: 'exported-2',
      status: 'draft',
      runAs: 'triggering_user',
    })
    const row = await flowRow(copy.body.data.id)
    expect(row.operations).not.toContain(MASK)
    expect(row.operations).not.toContain(BEARER)
    expect(JSON.parse(row.trigger_config).secret).toBeUndefined()
    const fresh = await call('POST', `${BASE}/import`, owner.token, { ...doc, slug: 'brand-new-slug' })
    expect(fresh.status).toBe(201)
    expect(fresh.body.data.slug).toBe('brand-new-slug')
  })

  it('import with flowId replaces the draft, keeping id, slug, versions, counters, token and masked credentials', async () => {
    const flow = await createFlow(validFlow({ name: 'Target' }))
    await publish(flow.id)
    await server.app.services.automate.lookup.countRun(flow.projectId, flow.id, {
      failed: true,
      atSeconds: 1_700_000_000,
    })
    const doc = (await call('GET', `${BASE}/${flow.id}/export`, owner.token)).body.data
    doc.name = 'Target renamed'
    doc.operations = [...doc.operations, { key: 'extra', type: 'log', config: { message: 'new' } }]
    const reply = await call('POST', `${BASE}/import?flowId=${flow.id}`, owner.token, doc)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toMatchObject({
      id: flow.id,
      slug: flow.slug,
      name: 'Target renamed',
      publishedVersion: 1,
      currentVersion: 1,
      runCount: 1,
      errorCount: 1,
      lastRunAt: new Date(1_700_000_000_000).toISOString(),
    })
    expect(reply.body.data.webhookEndpoint.token).toBe(flow.webhookEndpoint.token)
    const stored = JSON.parse((await flowRow(flow.id)).operations)
    expect(stepOf({ operations: stored }, 'call').config.auth.token).toBe(BEARER)
    expect(stepOf({ operations: stored }, 'extra')).toBeTruthy()
    expect(JSON.parse((await flowRow(flow.id)).trigger_config).secret).toBe(WEBHOOK_SECRET)
    expect((await call('POST', `${BASE}/import?flowId=${'0'.repeat(32)}`, owner.token, doc)).status).toBe(404)
  })

  it('import refuses bad documents with 422 and writes nothing', async () => {
    const before = await countRows('flows')
    for (const doc of [
      { format: 'plinth-flow-v0', name: 'x', triggerType: 'manual', triggerConfig: {}, operations: [] },
      { name: 'x', triggerType: 'manual', triggerConfig: {}, operations: [] },
      {
        format: 'plinth-flow-v1',
        name: 'x',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [{ key: 'a', type: 'nope', config: {} }],
      },
      {
        format: 'plinth-flow-v1',
        slug: 'Bad Slug',
        name: 'x',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [],
      },
      {
        format: 'plinth-flow-v1',
        name: 'x',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [],
        runAs: 'flow_owner',
      },
    ]) {
      const reply = await call('POST', `${BASE}/import`, owner.token, doc)
      expect(reply.status, reply.text).toBe(422)
    }
    expect(await countRows('flows')).toBe(before)
  })
})

describe('permissions (system/automate) and the deprecated alias', () => {
  let id: string
  beforeAll(async () => {
    id = (await createFlow({ name: 'Perm', triggerType: 'manual', triggerConfig: {}, operations: [] })).id
  })
  const mk = { name: 'P', triggerType: 'manual', triggerConfig: {}, operations: [] }
  runScenarios(
    () => server,
    [
      { name: 'anonymous list is 401', method: 'GET', path: BASE, status: 401 },
      {
        name: 'viewer cannot list (no automate grant)',
        method: 'GET',
        path: BASE,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden' },
      },
      { name: 'editor reads', method: 'GET', path: BASE, as: () => editor.token, status: 200 },
      { name: 'editor cannot create', method: 'POST', path: BASE, as: () => editor.token, body: mk, status: 403 },
      { name: 'read key lists', method: 'GET', path: BASE, as: () => readKey, status: 200 },
      { name: 'read key cannot create', method: 'POST', path: BASE, as: () => readKey, body: mk, status: 403 },
      { name: 'admin creates', method: 'POST', path: BASE, as: () => admin.token, body: mk, status: 201 },
      {
        name: 'updater cannot delete',
        method: 'DELETE',
        path: `${BASE}/${'a'.repeat(32)}`,
        as: () => updater.token,
        status: 403,
      },
      {
        name: 'editor cannot import',
        method: 'POST',
        path: `${BASE}/import`,
        as: () => editor.token,
        body: {},
        status: 403,
      },
      { name: 'quotas need read', method: 'GET', path: '/api/v1/automate/quotas', as: () => viewer.token, status: 403 },
      {
        name: 'the deprecated alias answers with Deprecation and Link',
        method: 'GET',
        path: '/api/automate/flows',
        as: () => editor.token,
        status: 200,
        responseHeaders: { deprecation: 'true', link: /\/api\/v1\/automate\/flows/ },
      },
    ],
  )

  it('editor cannot patch, publish, set status, rollback or delete; updater cannot delete', async () => {
    for (const [method, path, body] of [
      ['PATCH', `${BASE}/${id}`, { name: 'x' }],
      ['POST', `${BASE}/${id}/publish`, {}],
      ['PATCH', `${BASE}/${id}/status`, { status: 'inactive' }],
      ['POST', `${BASE}/${id}/rollback/1`],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/duplicate`, {}],
    ] as [string, string, unknown?][]) {
      expect((await call(method, path, editor.token, body)).status, `${method} ${path}`).toBe(403)
    }
    expect((await call('DELETE', `${BASE}/${id}`, updater.token)).status).toBe(403)
    expect((await flowRow(id)).name).toBe('Perm')
  })

  it('another project never sees the flow; the same slug is free there (import needs no adjustment)', async () => {
    const project = await call('POST', '/api/v1/projects', owner.token, { name: 'Automation elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    const get = await server.request('GET', `${BASE}/${id}`, { token: owner.token, headers: there })
    expect(get.status).toBe(404)
    const listed = await server.request('GET', BASE, { token: owner.token, headers: there })
    // Only its own system-managed flows (decision 038).
    expect((listed.body.data as { system: boolean }[]).filter((f) => !f.system)).toEqual([])
    for (const [method, path, body] of [
      ['PATCH', `${BASE}/${id}`, { name: 'x' }],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/publish`, {}],
    ] as [string, string, unknown?][]) {
      expect((await server.request(method, path, { token: owner.token, headers: there, body })).status).toBe(404)
    }
    const doc = (await call('GET', `${BASE}/${id}/export`, owner.token)).body.data
    const imported = await server.request('POST', `${BASE}/import`, { token: owner.token, headers: there, body: doc })
    expect(imported.status, imported.text).toBe(201)
    expect(imported.body.data).toMatchObject({ slug: doc.slug, projectId: project.body.data.id })
    expect((await flowRow(id)).name).toBe('Perm')
  })

  it('writes are audit-logged with the actor, never with credential values', async () => {
    const rows = await server.app.registry.system.db
      .selectFrom('audit_log')
      .select(['action', 'target_id', 'actor_id', 'details'])
      .where('action', 'like', 'flow.%')
      .execute()
    const actions = new Set(rows.map((r: any) => r.action))
    for (const action of [
      'flow.created',
      'flow.updated',
      'flow.deleted',
      'flow.duplicated',
      'flow.imported',
      'flow.status_changed',
      'flow.published',
      'flow.rolled_back',
    ]) {
      expect(actions, action).toContain(action)
    }
    expect(rows.find((r: any) => r.action === 'flow.created' && r.target_id === id)).toMatchObject({
      actor_id: owner.id,
    })
    const updated = rows.find((r: any) => r.action === 'flow.updated')
    expect(JSON.stringify(updated)).toContain('changed')
  })
})

it('no response of this file leaked a credential to a caller without update', () => {
  // Every reply to the read-only callers was checked above; here, no error message carried a secret.
  for (const reply of replies.filter((r) => r.status >= 400))
    for (const s of ALL_SECRETS) expect(reply.text).not.toContain(s)
})
