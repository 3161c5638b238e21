import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accessCreateShape, collectionCreateShape } from '../../src/modules/collections/index.js'
import { containerCreateShape } from '../../src/modules/containers/index.js'
import { lensAttachmentCreateShape } from '../../src/modules/lens-attachments/index.js'
import { navigationItemCreateShape } from '../../src/modules/navigation/index.js'
import { rendererCreateShape } from '../../src/modules/renderers/index.js'
import { viewCreateShape } from '../../src/modules/views/index.js'
import { grantsCreateShape, roleCreateShape } from '../../src/modules/access/index.js'
import { flowCreateShape, scriptCreateShape } from '../../src/modules/automate/index.js'
import { lensCreateShape } from '../../src/modules/lenses/index.js'
import { recordCreateShape } from '../../src/modules/records/index.js'
import { searchIndexCreateShape } from '../../src/modules/search-indexes/index.js'
import { webhookCreateShape } from '../../src/modules/webhooks/index.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { freshName } from './records-fixtures.js'

/**
 * Readers for the blueprint round trip (issue 29 item 6, src/lib/create-shape.ts): for each kind, a resource
 * created from a full body and read back gives that body again (server-owned fields gone), and the shape,
 * created again under another name, reads back as the same shape.
 */

let server: TestServer
let owner: Account

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

const call = async (method: string, path: string, body?: unknown) => {
  const reply = await server.request(method, path, { token: owner.token, body })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body.data
}

interface Kind {
  /** A full create body, as a blueprint would write it. */
  body: (name: string) => Record<string, unknown>
  create: (body: Record<string, unknown>) => Promise<Record<string, unknown>>
  shape: (live: Record<string, unknown>) => Record<string, unknown>
  /** The shape made into another resource of the kind (default: another name). */
  again?: (shape: Record<string, unknown>) => Record<string, unknown>
}

let collection = ''
let lensId = ''
const kinds: Record<string, Kind> = {
  collection: {
    body: (name) => ({
      name,
      storageType: process.env.TEST_STORAGE_TYPE || 'd1',
      fields: [
        { name: 'title', type: 'text', required: true, unique: false, indexed: true, label: 'Title' },
        {
          name: 'status',
          type: 'enum',
          required: false,
          unique: false,
          indexed: false,
          enumValues: ['a', 'b'],
          defaultValue: 'a',
        },
        { name: 'n', type: 'integer', required: false, unique: true, indexed: false, validationRules: { min: 0 } },
      ],
      indexes: [{ fields: ['status', '-n'], unique: false }],
      accessControl: { preset: 'team' },
    }),
    create: async (body) => {
      await call('POST', '/api/v1/collections', body)
      return call('GET', `/api/v1/collections/${body.name}`)
    },
    shape: (live) => collectionCreateShape(live as never),
  },
  role: {
    body: (name) => ({ name, description: 'Support staff', adminAccess: false }),
    create: (body) => call('POST', '/api/v1/roles', body),
    shape: (live) => roleCreateShape(live as never),
  },
  grants: {
    body: () => ({
      grants: [
        {
          resource: `collections/${collection}`,
          action: 'read',
          item_filter: { status: { _eq: 'a' } },
          fields: ['title'],
        },
        { resource: 'system/files', action: 'read' },
      ],
    }),
    create: async (body) => {
      const role = await call('POST', '/api/v1/roles', { name: freshName('g').replace(/_/g, '-') })
      await call('PUT', `/api/v1/roles/${role.id}/grants`, body)
      return { grants: await call('GET', `/api/v1/roles/${role.id}/grants`) }
    },
    shape: (live) => grantsCreateShape(live.grants as never),
  },
  lens: {
    body: (name) => ({
      name,
      description: 'Open ones',
      enabled: true,
      collection,
      filter: { status: { _eq: 'a' } },
      sort: [{ field: 'title', order: 'asc' }],
      fields: ['title', 'status'],
      limit: 50,
      params: [],
      template: { html: '<ul>{{#rows}}<li>{{title}}</li>{{/rows}}</ul>' },
    }),
    create: (body) => call('POST', '/api/v1/lenses', body),
    shape: lensCreateShape,
  },
  search_index: {
    body: (name) => ({
      name: name.replace(/_/g, '-'),
      description: 'Titles',
      sources: [{ collection, fields: ['title'] }],
    }),
    create: (body) => call('POST', '/api/v1/search-indexes', body),
    shape: searchIndexCreateShape,
  },
  webhook: {
    body: (name) => ({
      name,
      collection,
      events: ['record.create', 'record.update'],
      url: 'https://hooks.example.com/plinth',
      headers: {},
      active: true,
    }),
    create: (body) => call('POST', '/api/v1/webhooks', body),
    shape: webhookCreateShape,
  },
  script: {
    body: (name) => ({
      name,
      description: 'Adds one',
      code: 'export default function (input) { return input.n + 1 }',
      allowed_hosts: [],
      max_cpu_ms: 100,
      max_memory_mb: 32,
    }),
    create: (body) => call('POST', '/api/v1/automate/scripts', body),
    shape: scriptCreateShape,
  },
  flow: {
    body: (name) => ({
      name,
      description: 'Reads',
      icon: 'bolt',
      color: '#336699',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'read', type: 'crud_read', config: { collection, limit: 5 } }],
      collections: [collection],
    }),
    create: (body) => call('POST', '/api/v1/automate/flows', body),
    shape: flowCreateShape,
  },
  view: {
    body: (name) => ({
      name,
      collection,
      shared: true,
      filter: { status: { _eq: 'a' } },
      sortBy: '-n',
      fields: ['title', 'status'],
      limit: 50,
      search: 'urgent',
      layout: 'kanban',
      layoutOptions: { groupBy: 'status' },
    }),
    create: (body) => call('POST', '/api/v1/views', body),
    shape: (live) => viewCreateShape(live as never),
  },
  nav: {
    body: (name) => ({ label: name, icon: 'inbox', target: { kind: 'collection', ref: collection }, sortOrder: 3 }),
    create: (body) => call('POST', '/api/v1/navigation', body),
    shape: (live) => navigationItemCreateShape(live as never),
    again: (shape) => ({ ...shape, label: `${String(shape.label)}2` }),
  },
  renderer: {
    body: (name) => ({ name, collection, kind: 'card', template: '<b>{{title}}</b> ({{status}})' }),
    create: (body) => call('POST', '/api/v1/renderers', body),
    shape: (live) => rendererCreateShape(live as never),
  },
  attachment: {
    body: (name) => ({ lensId, collection, placement: 'record', label: name }),
    create: (body) => call('POST', '/api/v1/lens-attachments', body),
    shape: (live) => lensAttachmentCreateShape(live as never),
    // A lens is offered once per collection and placement.
    again: (shape) => ({ ...shape, placement: 'list' }),
  },
  container: {
    body: (name) => ({
      name,
      prefix: 'people/avatars',
      visibility: 'private',
      imageSizes: [{ name: 'small', size: 320 }],
      maxFileBytes: 2_097_152,
      allowedTypes: ['image/png', 'image/*'],
    }),
    create: (body) => call('POST', '/api/v1/containers', body),
    shape: (live) => containerCreateShape(live as never),
  },
}

beforeAll(async () => {
  collection = freshName('shapes')
  await kinds.collection!.create(kinds.collection!.body(collection))
  lensId = (await kinds.lens!.create(kinds.lens!.body(freshName('attached')))).id as string
})

describe('create → read → create shape is identity', () => {
  for (const [kind, k] of Object.entries(kinds)) {
    it(kind, async () => {
      const body = k.body(freshName(kind.slice(0, 4)))
      const shape = k.shape(await k.create(body))
      // The shape is canonical: what the body left to defaults (a flow's options, its trigger's and steps'
      // defaults) is there, filled in; everything the body said is there as it said it.
      expect(shape).toMatchObject(body)
      if (kind !== 'flow') expect(shape).toEqual(body)
      if (kind === 'grants') return expect(k.shape(await k.create(shape))).toEqual(shape)
      const again = k.again ? k.again(shape) : { ...shape, name: `${String(shape.name)}2` }
      expect(k.shape(await k.create(again))).toEqual(again)
    })
  }

  it('access', async () => {
    const shape = async (name: string) => accessCreateShape(await call('GET', `/api/v1/collections/${name}`))
    const plain = freshName('acc')
    await call('POST', '/api/v1/collections', {
      name: plain,
      fields: [{ name: 'title', type: 'text', required: false, unique: false, indexed: false }],
    })
    // No config reads as the default, stated whole: a blueprint must state sharing.
    expect(await shape(plain)).toEqual({ collection: plain, accessControl: { preset: 'team', sharing: false } })
    const body = { collection: plain, accessControl: { preset: 'private', sharing: true } }
    await call('PATCH', `/api/v1/collections/${plain}`, { accessControl: body.accessControl })
    expect(await shape(plain)).toEqual(body)
    const other = freshName('acc')
    await call('POST', '/api/v1/collections', {
      name: other,
      fields: [{ name: 'title', type: 'text', required: false, unique: false, indexed: false }],
    })
    await call('PATCH', `/api/v1/collections/${other}`, { accessControl: body.accessControl })
    expect(await shape(other)).toEqual({ ...body, collection: other })
  })

  it('record', async () => {
    const body = { title: 'x', status: 'b', n: 3 }
    const created = await server.request('POST', `/api/v1/collections/${collection}/records`, {
      token: owner.token,
      body,
    })
    expect(created.status, created.text).toBe(201)
    const read = await call('GET', `/api/v1/collections/${collection}/records/${created.body.id}`)
    expect(recordCreateShape(read)).toEqual(body)
  })
})
