import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createOperationRegistry,
  defineOperation,
  operationCatalog,
  type OperationRegistry,
} from '../../src/modules/operations/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { runScenarios } from '../support/scenarios.js'
import { accountWithGrants } from './collections-support.js'

/**
 * GET /api/v1/automate/operations[/:type] (automation spec "Operations catalog") over real HTTP: the
 * catalog with its form fields, one operation's JSON Schema, permission system/automate:read (viewer
 * without it 403, editor with it 200, a custom role granted it 200, anonymous 401), 404 for an unknown
 * type, and the deprecated /api/automate alias.
 */

const BASE = '/api/v1/automate/operations'
let server: TestServer
let owner: Account
let editor: Account
let viewer: Account
let reader: Account

/** Until issue 17 registers the system_* operations, flows are checked against one stand-in (the catalog routes keep the real registry). */
const archival = defineOperation({
  type: 'system_archival',
  category: 'system',
  label: 'Archival',
  description: 'stand-in',
  effects: 'writes',
  system: true,
  configSchema: z.strictObject({}),
  async run() {
    return null
  },
})
const withSystemOperation = (registry: OperationRegistry): OperationRegistry =>
  registry.get('system_archival') ? registry : createOperationRegistry([...registry.list(), archival])

beforeAll(async () => {
  server = await startServer({}, { operations: withSystemOperation })
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  reader = await accountWithGrants(server, owner.token, [{ resource: 'system/automate', action: 'read' }])
})
afterAll(async () => {
  await server?.stop()
})

describe('operations catalog: scenarios', () => {
  runScenarios(
    () => server,
    [
      { name: 'anonymous is 401', method: 'GET', path: BASE, status: 401, contains: { error: 'unauthorized' } },
      {
        name: 'viewer without system/automate:read is 403',
        method: 'GET',
        path: BASE,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden' },
      },
      {
        name: 'viewer is 403 on one operation too',
        method: 'GET',
        path: `${BASE}/math`,
        as: () => viewer.token,
        status: 403,
        contains: { error: 'forbidden' },
        notContains: ['formula'],
      },
      {
        name: 'editor reads the catalog',
        method: 'GET',
        path: BASE,
        as: () => editor.token,
        status: 200,
        contains: { data: expect.arrayContaining([expect.objectContaining({ type: 'math' })]) },
      },
      { name: 'a role granted read reads it', method: 'GET', path: BASE, as: () => reader.token, status: 200 },
      {
        name: 'the owner reads it',
        method: 'GET',
        path: `${BASE}/delay`,
        as: () => owner.token,
        status: 200,
        contains: { data: { type: 'delay' } },
      },
      {
        name: 'an unknown type is 404',
        method: 'GET',
        path: `${BASE}/send_pigeon`,
        as: () => editor.token,
        status: 404,
        contains: { error: 'not_found', message: "Unknown operation type 'send_pigeon'" },
      },
      {
        name: 'a prototype name is 404, not a crash',
        method: 'GET',
        path: `${BASE}/__proto__`,
        as: () => editor.token,
        status: 404,
        contains: { error: 'not_found' },
      },
      {
        name: 'unknown type for a viewer stays 403 (no probing)',
        method: 'GET',
        path: `${BASE}/send_pigeon`,
        as: () => viewer.token,
        status: 403,
      },
      {
        name: 'the deprecated alias answers with Deprecation and Link',
        method: 'GET',
        path: '/api/automate/operations',
        as: () => editor.token,
        status: 200,
        responseHeaders: { deprecation: 'true', link: '</api/v1/automate/operations>; rel="successor-version"' },
      },
      {
        name: 'the versioned path carries no Deprecation',
        method: 'GET',
        path: BASE,
        as: () => editor.token,
        status: 200,
        responseHeaders: { deprecation: null },
      },
      {
        name: 'the alias of one operation',
        method: 'GET',
        path: '/api/automate/operations/log',
        as: () => editor.token,
        status: 200,
        contains: { data: { type: 'log' } },
      },
    ],
  )
})

describe('GET /api/v1/automate/operations', () => {
  it('lists every registered operation with type, name, category, description, system and form fields', async () => {
    const reply = await server.request('GET', BASE, { token: editor.token })
    expect(reply.status, reply.text).toBe(200)
    const data = reply.body.data as Record<string, any>[]
    expect(data.map((op) => op.type)).toEqual(operationCatalog.map((d) => d.type))
    expect(data.map((op) => op.type)).toEqual(
      expect.arrayContaining([
        'condition',
        'stop',
        'throw_error',
        'set_variable',
        'math',
        'log',
        'delay',
        'crud_create',
        'crud_query',
      ]),
    )
    for (const op of data) {
      expect(Object.keys(op).sort()).toEqual(['category', 'description', 'fields', 'name', 'system', 'type'])
      expect(op.system, op.type).toBe(op.type.startsWith('system_'))
      expect(op.description.length).toBeGreaterThan(10)
    }
    expect(data.find((op) => op.type === 'delay')).toEqual({
      type: 'delay',
      name: 'Delay',
      category: 'transform',
      system: false,
      description: expect.any(String),
      fields: [
        {
          name: 'ms',
          type: 'integer',
          required: false,
          default: 1000,
          min: 0,
          max: 25_000,
          description: 'Milliseconds to wait',
        },
      ],
    })
    expect(data.find((op) => op.type === 'log')!.fields).toEqual([
      { name: 'message', type: 'string', required: true, max: 10_000, description: expect.any(String) },
      {
        name: 'level',
        type: 'string',
        required: false,
        default: 'info',
        options: ['info', 'warn', 'error', 'debug'],
        description: 'The log level',
      },
    ])
    expect(data.find((op) => op.type === 'condition')!.fields.map((f: any) => [f.name, f.type, f.required])).toEqual([
      ['rules', 'object', true],
      ['then', 'array', false],
      ['else', 'array', false],
    ])
  })
})

describe('GET /api/v1/automate/operations/:type', () => {
  it('answers the full config schema as JSON Schema', async () => {
    const reply = await server.request('GET', `${BASE}/throw_error`, { token: editor.token })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      data: {
        type: 'throw_error',
        name: 'Throw error',
        category: 'logic',
        system: false,
        description: expect.any(String),
        schema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: {
            message: { type: 'string', minLength: 1, maxLength: 2000, description: expect.any(String) },
            statusCode: { type: 'integer', minimum: 100, maximum: 599, default: 400, description: expect.any(String) },
          },
          required: ['message'],
          additionalProperties: false,
        },
      },
    })
  })
  it("describes math's enum and condition's rule tree", async () => {
    const math = await server.request('GET', `${BASE}/math`, { token: editor.token })
    expect(math.body.data.schema.properties.operation).toMatchObject({
      type: 'string',
      enum: ['sum', 'avg', 'min', 'max', 'round', 'floor', 'ceil', 'abs', 'formula'],
    })
    expect(math.body.data.schema.required).toEqual(['operation'])
    const condition = await server.request('GET', `${BASE}/condition`, { token: editor.token })
    expect(condition.body.data.schema.properties.rules).toMatchObject({
      type: 'object',
      description: expect.stringContaining('_and'),
    })
    expect(condition.body.data.schema.properties.then).toMatchObject({
      type: 'array',
      items: { type: 'object', required: ['key', 'type'] },
    })
  })
  it('an API key with the capability reads; one without is 403', async () => {
    const withRead = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'ops-read', capabilities: ['system/automate:read'] },
    })
    const without = await server.request('POST', '/api/auth/api-keys', {
      token: owner.token,
      body: { label: 'ops-none', capabilities: ['collections/*:read'] },
    })
    expect(withRead.status, withRead.text).toBe(201)
    expect(without.status, without.text).toBe(201)
    expect((await server.request('GET', BASE, { token: withRead.body.raw })).status).toBe(200)
    const refused = await server.request('GET', `${BASE}/math`, { token: without.body.raw })
    expect(refused.status, refused.text).toBe(403)
  })
})

describe('system_* operations', () => {
  it('are refused in a user flow on create, and on patch (422 naming the step)', async () => {
    const body = {
      name: 'sneaky',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'archive', type: 'system_archival', config: {} }],
    }
    const created = await server.request('POST', '/api/v1/automate/flows', { token: owner.token, body })
    expect(created.status, created.text).toBe(422)
    expect(created.body).toMatchObject({
      error: 'validation_error',
      details: { step: 'archive', path: 'operations[0].type' },
    })
    expect(created.body.message).toMatch(/system-managed flows only/)
    const plain = await server.request('POST', '/api/v1/automate/flows', {
      token: owner.token,
      body: { ...body, operations: [] },
    })
    expect(plain.status, plain.text).toBe(201)
    const patched = await server.request('PATCH', `/api/v1/automate/flows/${plain.body.data.id}`, {
      token: owner.token,
      body: { operations: body.operations },
    })
    expect(patched.status, patched.text).toBe(422)
    const nested = await server.request('PATCH', `/api/v1/automate/flows/${plain.body.data.id}`, {
      token: owner.token,
      body: {
        operations: [
          {
            key: 'c',
            type: 'condition',
            config: { rules: { field: '$trigger.body.x', operator: 'eq', value: 1 }, then: body.operations },
          },
        ],
      },
    })
    expect(nested.status, nested.text).toBe(422)
    expect(nested.body.details).toMatchObject({ step: 'archive', path: 'operations[0].config.then[0].type' })
    const stored = await server.request('GET', `/api/v1/automate/flows/${plain.body.data.id}`, { token: owner.token })
    expect(stored.body.data.operations).toEqual([])
  })
})
