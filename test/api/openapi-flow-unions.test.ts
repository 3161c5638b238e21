import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { triggerTypes } from '../../src/modules/automate/triggers/registry.js'
import { operationCatalog } from '../../src/modules/operations/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'

// The document publishes a flow's trigger config and each step's config as discriminated unions derived from the
// registries (a typed client can write a flow), while what the API accepts is unchanged: the service still
// checks a flow body and answers 422 validation_error naming the path.

let server: TestServer
let owner: Account
let doc: any
beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  doc = (await server.request('GET', '/api/openapi.json')).body
})
afterAll(async () => {
  await server?.stop()
})

const schemas = () => doc.components.schemas as Record<string, any>
const resolve = (node: { $ref?: string }) => schemas()[node.$ref!.replace('#/components/schemas/', '')]
const bodyOf = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema

describe('the flow schemas in GET /api/openapi.json', () => {
  it('publishes the create body as one member per trigger type, discriminated by triggerType', () => {
    const body = bodyOf('/api/v1/automate/flows', 'post')
    expect(body.discriminator.propertyName).toBe('triggerType')
    expect(body.oneOf).toHaveLength(triggerTypes.length)
    const members = body.oneOf.map(resolve)
    expect(members.map((m: any) => m.properties.triggerType.const)).toEqual([...triggerTypes])
    for (const member of members) {
      expect(member.required).toEqual(expect.arrayContaining(['name', 'triggerType', 'triggerConfig', 'operations']))
      expect(member.additionalProperties).toBe(false)
    }
    // The webhook member's config is the webhook trigger's schema, not a free record.
    const webhook = members.find((m: any) => m.properties.triggerType.const === 'webhook')
    const config = resolve(webhook.properties.triggerConfig)
    expect(Object.keys(config.properties)).toEqual(
      expect.arrayContaining(['allowed_methods', 'require_auth', 'secret', 'ip_allowlist']),
    )
    expect(config.additionalProperties).toBe(false)
  })

  it('publishes the portable document (export answer, import body) the same way, with its format', () => {
    const body = bodyOf('/api/v1/automate/flows/import', 'post')
    expect(body.discriminator.propertyName).toBe('triggerType')
    const members = body.oneOf.map(resolve)
    expect(members.map((m: any) => m.properties.triggerType.const)).toEqual([...triggerTypes])
    expect(members[0].properties.format).toMatchObject({ const: 'plinth-flow-v1' })
    expect(members[0].required).toEqual(expect.arrayContaining(['format', 'triggerConfig']))
    const exported =
      doc.paths['/api/v1/automate/flows/{flowId}/export'].get.responses['200'].content['application/json']
    expect(exported.schema.properties.data.oneOf).toEqual(body.oneOf)
  })

  it('publishes a step as one member per operation type, discriminated by type, each with its config schema', () => {
    const step = schemas().FlowStep
    expect(step.discriminator.propertyName).toBe('type')
    expect(step.oneOf).toHaveLength(operationCatalog.length)
    const members = step.oneOf.map(resolve)
    expect(members.map((m: any) => m.properties.type.const)).toEqual(operationCatalog.map((o) => o.type))
    const delay = members.find((m: any) => m.properties.type.const === 'delay')
    expect(delay.properties.config.properties.ms).toMatchObject({ type: 'integer', maximum: 25_000 })
    // The create body's steps, the patch body's and a stored flow's are that union.
    const create = resolve(bodyOf('/api/v1/automate/flows', 'post').oneOf[0])
    expect(create.properties.operations.items).toEqual({ $ref: '#/components/schemas/FlowStep' })
    const patch = resolve(bodyOf('/api/v1/automate/flows/{flowId}', 'patch').allOf[0])
    expect(patch.properties.operations.items).toEqual({ $ref: '#/components/schemas/FlowStep' })
    expect(patch.properties.triggerConfig.anyOf).toHaveLength(triggerTypes.length)
    expect(schemas().Flow.properties.operations.items.oneOf).toEqual([{ $ref: '#/components/schemas/FlowStep' }])
    expect(schemas().Flow.properties.triggerConfig.anyOf).toHaveLength(triggerTypes.length)
    // A run's step log keeps its own component.
    expect(schemas().FlowStepLog.properties).toHaveProperty('durationMs')
  })
})

describe('what POST /api/v1/automate/flows accepts is unchanged', () => {
  const create = (body: unknown) => server.request('POST', '/api/v1/automate/flows', { token: owner.token, body })
  const valid = {
    name: 'Union check',
    triggerType: 'manual',
    triggerConfig: {},
    operations: [{ key: 'wait', type: 'delay', config: { ms: 5 } }],
  }

  it('creates a valid flow', async () => {
    const reply = await create(valid)
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data.operations[0]).toMatchObject({ key: 'wait', type: 'delay', config: { ms: 5 } })
  })

  it('refuses a bad step config with 422 validation_error from the service, not a 400 from the route', async () => {
    const reply = await create({ ...valid, operations: [{ key: 'wait', type: 'delay', config: { ms: 'soon' } }] })
    expect(reply.status, reply.text).toBe(422)
    expect(reply.body.error).toBe('validation_error')
  })

  it('refuses a trigger config that does not fit its trigger type with 422', async () => {
    const reply = await create({ ...valid, triggerType: 'webhook', triggerConfig: { allowed_methods: ['BREW'] } })
    expect(reply.status, reply.text).toBe(422)
    expect(reply.body.error).toBe('validation_error')
  })
})
