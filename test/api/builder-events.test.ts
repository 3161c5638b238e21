import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { ResourceEvent } from '../../src/lib/events/index.js'
import { builderEventNames } from '../../src/modules/automate/triggers/app-event.js'
import { documentedEvents, eventShape } from '../support/documented-events.js'
import { startServer, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { createCollection, expectError, freshName } from './records-fixtures.js'

/**
 * The builder resources' events (docs/events.md "view.*, navigation.*, …"): `<kind>.create`, `.update` and
 * `.delete` after each committed write, the resource before and after as its GET answers it; personal views,
 * refused writes and writes that change nothing publish nothing; a reorder publishes one update per item
 * moved; an app_event flow reacts to them. Runs on PostgreSQL with TEST_DATABASE_URL.
 */

let server: TestServer
let owner: Account
let viewer: Account
let collection = ''
let lensId = ''
const seen: { type: string; event: ResourceEvent<Record<string, unknown>> }[] = []
const stops: (() => void)[] = []

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
  collection = await createCollection(server, owner.token, freshName('bev'), [
    { name: 'title', type: 'text', required: false, unique: false, indexed: false },
  ])
  const lens = await call('POST', '/api/v1/lenses', {
    name: freshName('lens'),
    collection,
    template: { html: '<p>{{#rows}}{{title}}{{/rows}}</p>' },
  })
  lensId = lens.id
  const bus = server.app.events as unknown as {
    on(type: string, handler: (event: ResourceEvent<Record<string, unknown>>) => void): () => void
  }
  for (const type of builderEventNames) stops.push(bus.on(type, (event) => void seen.push({ type, event })))
})
afterAll(async () => {
  for (const stop of stops) stop()
  await server?.stop()
})

async function call(method: string, path: string, body?: unknown, token = owner.token) {
  const reply = await server.request(method, path, { token, body })
  expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
  return reply.body?.data
}

/** The events about one resource, once `count` have arrived (handlers run after the write answered). */
async function eventsOf(id: string, count: number) {
  await vi.waitFor(() => expect(seen.filter((s) => s.event.id === id).length).toBeGreaterThanOrEqual(count))
  // Give a wrongly published extra event the same chance to arrive before the count is checked.
  await new Promise((resolve) => setTimeout(resolve, 50))
  return seen.filter((s) => s.event.id === id)
}

const kinds = {
  view: {
    path: '/api/v1/views',
    body: () => ({ name: freshName('v'), collection, shared: true }),
    change: { layout: 'cards' },
  },
  navigation: {
    path: '/api/v1/navigation',
    body: () => ({ label: freshName('n'), target: { kind: 'collection', ref: collection } }),
    change: { label: 'Renamed' },
  },
  renderer: {
    path: '/api/v1/renderers',
    body: () => ({ name: freshName('r'), collection, kind: 'card', template: '<b>{{title}}</b>' }),
    change: { template: '<i>{{title}}</i>' },
  },
  lens_attachment: {
    path: '/api/v1/lens-attachments',
    body: () => ({ lensId, collection, placement: 'record', label: 'Summary' }),
    change: { label: 'Overview' },
  },
  container: {
    path: '/api/v1/containers',
    body: () => ({ name: freshName('c'), allowedTypes: ['image/*'] }),
    change: { maxFileBytes: 1024 },
  },
} as const

describe('builder resource events', () => {
  for (const [kind, k] of Object.entries(kinds)) {
    it(`${kind}: create, update and delete each publish once, with the resource as GET answers it`, async () => {
      const created = await call('POST', k.path, k.body())
      const id: string = created.id
      const updated = await call('PATCH', `${k.path}/${id}`, k.change)
      await call('DELETE', `${k.path}/${id}`)
      const events = await eventsOf(id, 3)
      expect(events.map((e) => e.type)).toEqual([`${kind}.create`, `${kind}.update`, `${kind}.delete`])
      const [create, update, remove] = events.map((e) => JSON.parse(JSON.stringify(e.event)))
      expect(create).toMatchObject({
        before: null,
        after: created,
        id,
        projectId: expect.stringMatching(/^[0-9a-f]{32}$/),
      })
      expect(update).toMatchObject({ before: created, after: updated })
      expect(remove).toMatchObject({ before: updated, after: null })
      for (const event of [create, update, remove])
        expect(event).toMatchObject({
          projectId: create.projectId,
          principal: { id: owner.id, kind: 'user', role: owner.role },
          at: expect.any(Number),
        })
      // The payload is exactly what docs/events.md shows.
      const example = documentedEvents().get(`${kind}.update`)!
      expect(eventShape(update)).toEqual(eventShape(example))
    })
  }

  it('a personal view publishes nothing until it is shared; an unchanged write and a refused one publish nothing', async () => {
    const personal = await call('POST', '/api/v1/views', { name: freshName('p'), collection })
    await call('PATCH', `/api/v1/views/${personal.id}`, { layout: 'cards' })
    const shared = await call('PATCH', `/api/v1/views/${personal.id}`, { shared: true })
    const events = await eventsOf(personal.id, 1)
    expect(events.map((e) => e.type)).toEqual(['view.update'])
    expect(events[0]!.event).toMatchObject({ before: { shared: false }, after: { shared: true } })
    expect(shared.shared).toBe(true)

    const renderer = await call('POST', '/api/v1/renderers', {
      name: freshName('r'),
      collection,
      kind: 'row',
      template: '{{title}}',
    })
    await call('PATCH', `/api/v1/renderers/${renderer.id}`, { template: '{{title}}' })
    expectError(
      await server.request('PATCH', `/api/v1/renderers/${renderer.id}`, {
        token: viewer.token,
        body: { template: 'x' },
      }),
      403,
      'forbidden',
    )
    expect((await eventsOf(renderer.id, 1)).map((e) => e.type)).toEqual(['renderer.create'])
  })

  it('a reorder publishes navigation.update for each item it moved, and only those', async () => {
    const target = { kind: 'collection', ref: collection }
    const a = await call('POST', '/api/v1/navigation', { label: freshName('a'), target })
    const b = await call('POST', '/api/v1/navigation', { label: freshName('b'), target })
    const list = (await call('GET', '/api/v1/navigation?limit=100')) as {
      id: string
      parentId: string | null
      sortOrder: number
    }[]
    const items = list.map(({ id, parentId, sortOrder }) => ({ id, parentId, sortOrder }))
    // a and b swap places; every other item keeps its place.
    const ia = items.findIndex((i) => i.id === a.id)
    const ib = items.findIndex((i) => i.id === b.id)
    expect(items[ia]!.sortOrder).not.toBe(items[ib]!.sortOrder)
    ;[items[ia]!.sortOrder, items[ib]!.sortOrder] = [items[ib]!.sortOrder, items[ia]!.sortOrder]
    const before = seen.length
    await call('PUT', '/api/v1/navigation/order', { items })
    await vi.waitFor(() => expect(seen.length - before).toBeGreaterThanOrEqual(2))
    await new Promise((resolve) => setTimeout(resolve, 50))
    const moved = seen.slice(before)
    expect(moved.map((m) => m.type)).toEqual(['navigation.update', 'navigation.update'])
    expect(moved.map((m) => m.event.id).sort()).toEqual([a.id, b.id].sort())
    for (const { event } of moved) expect(event.before?.sortOrder).not.toBe(event.after?.sortOrder)
  })
})

describe('app_event flows on builder events', () => {
  it('a flow listening to container.create runs with the event as $trigger.body', async () => {
    const BASE = '/api/v1/automate'
    const flow = await call('POST', `${BASE}/flows`, {
      name: freshName('watch'),
      triggerType: 'app_event',
      triggerConfig: { events: ['container.create'] },
      operations: [{ key: 'seen', type: 'set_variable', config: { key: 'seen', value: '{{= $trigger }}' } }],
    })
    await call('POST', `${BASE}/flows/${flow.id}/publish`, { changeSummary: 'first' })
    await call('PATCH', `${BASE}/flows/${flow.id}/status`, { status: 'active' })
    const container = await call('POST', '/api/v1/containers', { name: freshName('c') })
    const [{ event }] = (await eventsOf(container.id, 1)) as [(typeof seen)[number]]
    let runs: { runId: string; status: string }[] = []
    await vi.waitFor(
      async () => {
        runs = await call('GET', `${BASE}/runs?flow_id=${flow.id}&limit=10`)
        expect(runs.length).toBeGreaterThan(0)
        expect(runs.every((r) => !['pending', 'running'].includes(r.status))).toBe(true)
      },
      { timeout: 10_000, interval: 25 },
    )
    expect(runs).toHaveLength(1)
    const run = await call('GET', `${BASE}/runs/${runs[0]!.runId}`)
    expect(run.status).toBe('completed')
    expect(run.stepLogs.find((log: { key: string }) => log.key === 'seen')?.output).toEqual({
      event: 'container.create',
      collection: null,
      method: null,
      body: JSON.parse(JSON.stringify(event)),
    })
    expect(run.actingAs).toMatchObject({ userId: owner.id })
  })
})
