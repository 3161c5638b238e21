import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isAppError } from '../../src/lib/errors.js'
import type { Principal } from '../../src/lib/principal.js'
import { accessProviders } from '../../src/modules/blueprints/providers/access.js'
import { automationProviders } from '../../src/modules/blueprints/providers/automation.js'
import { builderProviders } from '../../src/modules/blueprints/providers/builder.js'
import { collectionProviders } from '../../src/modules/blueprints/providers/collections.js'
import { recordsProvider } from '../../src/modules/blueprints/providers/records.js'
import { changedPaths, contentHash, withoutPaths } from '../../src/modules/blueprints/providers/canonical.js'
import type { BrickProvider } from '../../src/modules/blueprints/providers/provider.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, sessionPrincipal, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, freshName } from './records-fixtures.js'

/**
 * The blueprint resource providers (issue 30 item 3) over the live services, as a person: a brick body made
 * desired (the create route's schema, defaults filled), created, found by its natural key, read back with no
 * changed path and the same content hash, changed in place, refused for a caller without the route's
 * permission, and removed. Runs on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let viewer: Account
let ownerActor: Principal
let viewerActor: Principal
let providers: Map<string, BrickProvider>
let collection = ''
let lensId = ''

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  ownerActor = await sessionPrincipal(server, owner.token, owner, true)
  viewerActor = await sessionPrincipal(server, owner.token, viewer, false)
  const s = server.app.services
  providers = new Map(
    [
      ...builderProviders(s),
      ...automationProviders(s),
      ...accessProviders(s),
      ...collectionProviders(s),
      recordsProvider(s),
    ].map((p) => [p.kind, p]),
  )
  collection = await createCollection(server, owner.token, freshName('bp'), [
    { name: 'title', type: 'text', required: false, unique: false, indexed: false },
    { name: 'status', type: 'text', required: false, unique: false, indexed: false },
  ])
  const lens = await server.request('POST', '/api/v1/lenses', {
    token: owner.token,
    body: { name: freshName('lens'), collection },
  })
  lensId = lens.body.data.id
})
afterAll(async () => {
  await server?.stop()
})

/** A full brick body per kind, and a change its update path makes. */
const bricks: Record<string, { body: () => Record<string, unknown>; change: Record<string, unknown> }> = {
  view: {
    body: () => ({ name: freshName('v'), collection, shared: true, filter: { status: { _eq: 'open' } }, limit: 50 }),
    change: { layout: 'cards' },
  },
  nav: {
    body: () => ({ label: freshName('n'), icon: 'inbox', target: { kind: 'collection', ref: collection } }),
    change: { icon: 'star' },
  },
  renderer: {
    body: () => ({ name: freshName('r'), collection, kind: 'card', template: '<b>{{title}}</b>' }),
    change: { template: '<i>{{title}}</i>' },
  },
  attachment: {
    body: () => ({ lensId, collection, placement: 'record', label: 'Summary' }),
    change: { label: 'Overview' },
  },
  container: {
    body: () => ({ name: freshName('c'), prefix: 'docs', allowedTypes: ['application/pdf'] }),
    change: { maxFileBytes: 4096 },
  },
  lens: {
    body: () => ({
      name: freshName('l'),
      collection,
      fields: ['title'],
      template: { html: '<p>{{#rows}}{{title}}{{/rows}}</p>' },
    }),
    change: { limit: 10 },
  },
  webhook: {
    body: () => ({
      name: freshName('w'),
      collection,
      events: ['record.create'],
      url: 'https://hooks.example.com/in',
      secret: 'a-long-shared-secret-value',
    }),
    change: { events: ['record.create', 'record.delete'] },
  },
  'search-index': {
    body: () => ({ name: freshName('s').replace(/_/g, '-'), sources: [{ collection, fields: ['title'] }] }),
    change: { description: 'Titles' },
  },
  collection: {
    body: () => ({
      name: freshName('col'),
      storageType: process.env.TEST_STORAGE_TYPE || undefined,
      accessPreset: 'private',
      fields: [
        { name: 'title', type: 'text', required: true, unique: false, indexed: true },
        { name: 'rank', type: 'integer', required: false, unique: false, indexed: false },
        { name: 'meta', type: 'jsonb', required: false, unique: false, indexed: false },
      ],
      indexes: [{ fields: ['title', '-rank'] }],
    }),
    change: {
      fields: [
        { name: 'title', type: 'text', required: true, unique: false, indexed: true },
        { name: 'rank', type: 'integer', required: false, unique: false, indexed: false },
        { name: 'meta', type: 'json', required: false, unique: false, indexed: false },
        { name: 'note', type: 'text', required: false, unique: false, indexed: false },
      ],
    },
  },
  flow: {
    body: () => ({
      name: freshName('f'),
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'read', type: 'crud_read', config: { collection, limit: 5 } }],
    }),
    change: { description: 'Reads five' },
  },
  role: {
    body: () => ({ name: freshName('role').replace(/_/g, '-') }),
    change: { description: 'Support desk' },
  },
  script: {
    body: () => ({
      name: freshName('x'),
      code: 'export default () => 1',
      allowed_hosts: ['b.example.com', 'a.example.com'],
    }),
    change: { description: 'One' },
  },
}

/** What a plan compares: the comparable shape without the kind's uncompared paths. */
const compared = (p: BrickProvider, shape: Record<string, unknown>) => withoutPaths(p.comparable(shape), p.notCompared)

describe('each provider round-trips its resource through the services, as the caller', () => {
  for (const [kind, brick] of Object.entries(bricks)) {
    it(kind, async () => {
      const p = providers.get(kind)!
      expect(p, kind).toBeDefined()
      const desired = p.desired(brick.body())
      const created = await p.create(ownerActor, desired)
      const read = await p.read(ownerActor, created.ref)
      expect(read).not.toBeNull()
      // Read back, it is what the brick said: nothing compared differs, the hash is the same.
      expect(changedPaths(compared(p, desired), compared(p, read!.shape))).toEqual([])
      expect(contentHash(compared(p, read!.shape))).toBe(contentHash(compared(p, desired)))
      // Found by its natural key, once.
      expect((await p.find(ownerActor, desired)).map((r) => r.ref)).toEqual([created.ref])

      // A caller without the route's permission is refused by the service itself; nothing is written.
      const other = p.desired({ ...brick.body(), ...(kind === 'attachment' ? { placement: 'list' } : {}) })
      const refused = await p.create(viewerActor, other).then(
        () => null,
        (err: unknown) => err,
      )
      expect(isAppError(refused) && refused.code, kind).toBe('forbidden')
      expect(await p.find(ownerActor, other)).toEqual([])

      // Changed in place: the change is the one path that differs from the first brick.
      const changed = p.desired({ ...desired, ...brick.change })
      const updated = await p.update!(ownerActor, created.ref, changed)
      expect(updated.ref).toBe(created.ref)
      expect(changedPaths(compared(p, changed), compared(p, updated.shape))).toEqual([])
      expect(changedPaths(compared(p, desired), compared(p, updated.shape))).toEqual(
        kind === 'webhook' ? ['events'] : Object.keys(brick.change),
      )

      await p.remove(ownerActor, created.ref)
      expect(await p.read(ownerActor, created.ref)).toBeNull()
    })
  }

  it('a body its create route would refuse is refused with the route’s error', () => {
    for (const [kind, p] of providers) {
      let err: unknown
      try {
        p.desired({ unexpected: true })
      } catch (e) {
        err = e
      }
      // The code its route answers: flows check their bodies in the service (422), the others at the route (400).
      expect(isAppError(err) && err.code, kind).toBe(kind === 'flow' ? 'validation_error' : 'invalid_request')
    }
  })

  it('compares credentials by presence and hosts as a set', () => {
    const webhook = providers.get('webhook')!
    const a = webhook.comparable({ name: 'w', secret: 'one', headers: { 'x-b': '1', 'x-a': '2' } })
    const b = webhook.comparable({ name: 'w', secret: '••••', headers: { 'x-a': '••••', 'x-b': '••••' } })
    expect(changedPaths(a, b)).toEqual([])
    expect(changedPaths(a, webhook.comparable({ name: 'w', headers: {} }))).toEqual(['hasSecret', 'headers'])
    const script = providers.get('script')!
    expect(
      changedPaths(script.comparable({ allowed_hosts: ['b', 'a'] }), script.comparable({ allowed_hosts: ['a', 'b'] })),
    ).toEqual([])
  })
})

describe('grants and access bricks write their whole resource in place', () => {
  it('grants: replaced whole on a named role, read back as written, refused without system/roles', async () => {
    const p = providers.get('grants')!
    const role = freshName('desk').replace(/_/g, '-')
    expect((await server.request('POST', '/api/v1/roles', { token: owner.token, body: { name: role } })).status).toBe(
      201,
    )
    const desired = p.desired({
      role,
      grants: [
        { resource: `collections/${collection}`, action: 'read', item_filter: { status: { _eq: 'open' } } },
        { resource: 'system/files', action: 'read' },
      ],
    })
    expect(await p.find(ownerActor, desired)).toEqual([{ ref: expect.any(String), shape: { role, grants: [] } }])
    const written = await p.create(ownerActor, desired)
    expect(changedPaths(desired, written.shape)).toEqual([])
    expect(changedPaths(desired, (await p.read(ownerActor, written.ref))!.shape)).toEqual([])
    const refused = await p.update!(viewerActor, written.ref, { ...desired, grants: [] }).catch((e: unknown) => e)
    expect(isAppError(refused) && refused.code).toBe('forbidden')
    expect(changedPaths(desired, (await p.read(ownerActor, written.ref))!.shape)).toEqual([])
    const missing = await p.create(ownerActor, { ...desired, role: 'no-such-role' }).catch((e: unknown) => e)
    expect(isAppError(missing) && missing.code).toBe('not_found')
    await p.remove(ownerActor, written.ref)
    expect((await p.read(ownerActor, written.ref))!.shape).toEqual({ role, grants: [] })
  })

  it('access: the access config alone, sharing stated; the fields stay as they are', async () => {
    const p = providers.get('access')!
    expect(() => p.desired({ collection, accessControl: { preset: 'private' } })).toThrow(/sharing/)
    const before = (await server.request('GET', `/api/v1/collections/${collection}`, { token: owner.token })).body.data
    expect(
      (await p.find(ownerActor, p.desired({ collection, accessControl: { preset: 'team', sharing: false } })))[0]
        ?.shape,
    ).toEqual({ collection, accessControl: { preset: 'team', sharing: false } })
    const desired = p.desired({ collection, accessControl: { preset: 'private', sharing: true } })
    const written = await p.create(ownerActor, desired)
    expect(written).toEqual({ ref: collection, shape: desired })
    const after = (await server.request('GET', `/api/v1/collections/${collection}`, { token: owner.token })).body.data
    expect(after.fields).toEqual(before.fields)
    const refused = await p.update!(viewerActor, collection, desired).catch((e: unknown) => e)
    expect(isAppError(refused) && refused.code).toBe('forbidden')
    await p.remove(ownerActor, collection)
    expect((await p.read(ownerActor, collection))!.shape).toEqual({
      collection,
      accessControl: { preset: 'team', sharing: false },
    })
    expect(await p.read(ownerActor, 'no_such_collection')).toBeNull()
  })
})

describe('records bricks seed rows found again by their natural key', () => {
  it('reads, upserts, refuses, detects a key held twice, and removes', async () => {
    const p = providers.get('records')!
    const tags = await createCollection(server, owner.token, freshName('tags'), [
      { name: 'slug', type: 'text', required: true, unique: false, indexed: true },
      { name: 'label', type: 'text', required: false, unique: false, indexed: false },
    ])
    const rows = [
      { slug: 'bug', label: 'Bug' },
      { slug: 'idea', label: 'Idea' },
    ]
    // The key defaults to slug; a row without it is refused.
    const desired = p.desired({ collection: tags, rows })
    expect(desired).toEqual({ collection: tags, key: 'slug', rows })
    expect(() => p.desired({ collection: tags, rows: [{ label: 'x' }] })).toThrow(/natural key/)
    expect(await p.find(ownerActor, desired)).toEqual([])

    const refused = await p.create(viewerActor, desired).catch((e: unknown) => e)
    expect(isAppError(refused) && refused.code).toBe('forbidden')
    expect(await p.find(ownerActor, desired)).toEqual([])

    const created = await p.create(ownerActor, desired)
    expect(created).toMatchObject({ ref: `${tags}/slug`, shape: desired })
    expect(Object.keys(created.members ?? {}).sort()).toEqual(['"bug"', '"idea"'])
    // Applying it again writes nothing: still two records.
    await p.create(ownerActor, desired)
    const listed = await server.request('GET', `/api/v1/collections/${tags}/records?limit=10`, { token: owner.token })
    expect(listed.body.total).toBe(2)
    const version = (listed.body.data as { slug: string; _version: number }[]).find((r) => r.slug === 'bug')!._version

    // One row changed, one added: the unchanged row is not written.
    const next = p.desired({
      collection: tags,
      rows: [
        { slug: 'bug', label: 'Bug' },
        { slug: 'idea', label: 'Ideas' },
        { slug: 'task', label: 'Task' },
      ],
    })
    expect(changedPaths(next, (await p.read(ownerActor, created.ref, next))!.shape)).toEqual(['rows'])
    const updated = await p.update!(ownerActor, created.ref, next)
    expect(updated.shape).toEqual(next)
    const after = await server.request('GET', `/api/v1/collections/${tags}/records?limit=10`, { token: owner.token })
    expect(after.body.total).toBe(3)
    expect((after.body.data as { slug: string; _version: number }[]).find((r) => r.slug === 'bug')!._version).toBe(
      version,
    )

    // A key held twice: the seed is ambiguous, and an upsert refuses rather than guess.
    const twin = await server.request('POST', `/api/v1/collections/${tags}/records`, {
      token: owner.token,
      body: { slug: 'bug', label: 'Other bug' },
    })
    expect(twin.status, twin.text).toBe(201)
    expect((await p.find(ownerActor, next)).length).toBe(2)
    const conflict = await p.update!(ownerActor, created.ref, next).catch((e: unknown) => e)
    expect(isAppError(conflict) && conflict.code).toBe('conflict')

    await p.remove(ownerActor, created.ref, next)
    expect(await p.read(ownerActor, created.ref, next)).toBeNull()
  })
})
