import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'
import { createCollection, freshName } from './records-fixtures.js'

/**
 * Lens attachments (issue 29 item 4, decision 065) over real HTTP: CRUD under system/lens-attachments with
 * the `?collection=` filter, the lens checked to be this project's (another project's lens id is refused),
 * removal with the lens and with the collection, and another project's attachment ids.
 */
const ATTACHMENTS = '/api/v1/lens-attachments'
let server: TestServer
let owner: Account
/** system/lens-attachments manage. */
let manager: Account
/** No system/lens-attachments grant. */
let outsider: Account
/** The built-in viewer role: reads attachments. */
let viewer: Account
let orders: string
let lensId: string

const request = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> => server.request(method, path, { token, body, headers })

function refused(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.body).toMatchObject({ error: code, message: expect.any(String) })
}

async function createLens(collection: string, name = freshName('lens'), headers?: Record<string, string>) {
  const reply = await request('POST', '/api/v1/lenses', owner.token, { name, collection, fields: ['title'] }, headers)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data.id as string
}

async function attach(body: Record<string, unknown>, token = manager.token): Promise<any> {
  const reply = await request('POST', ATTACHMENTS, token, {
    lensId,
    collection: orders,
    placement: 'record',
    label: 'Print',
    ...body,
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  orders = await createCollection(server, owner.token, freshName('orders'), [
    { name: 'title', type: 'text', required: true },
  ])
  lensId = await createLens(orders)
  manager = await accountWithGrants(server, owner.token, [{ resource: 'system/lens-attachments', action: 'manage' }])
  outsider = await accountWithGrants(server, owner.token, [{ resource: 'system/lenses', action: 'manage' }])
  viewer = await createAccount(server, owner.token, { role: 'viewer' })
})
afterAll(async () => {
  await server?.stop()
})

describe('lens attachment CRUD', () => {
  it('attaches, lists a page filtered by collection, reads, changes and detaches', async () => {
    const record = await attach({ label: 'Invoice' })
    expect(record).toMatchObject({ lensId, collection: orders, placement: 'record', label: 'Invoice' })
    const list = await attach({ placement: 'list', label: 'Report' })
    const page = await request('GET', `${ATTACHMENTS}?collection=${orders}&limit=1`, viewer.token)
    expect(page.status, page.text).toBe(200)
    expect(page.body).toMatchObject({ page: 1, limit: 1, total: 2, hasMore: true })
    const all = await request('GET', `${ATTACHMENTS}?collection=${orders}`, viewer.token)
    expect(all.body.data.map((a: any) => a.id)).toEqual([list.id, record.id])
    expect((await request('GET', `${ATTACHMENTS}?collection=nothing_here`, viewer.token)).body.total).toBe(0)
    expect((await request('GET', `${ATTACHMENTS}/${record.id}`, viewer.token)).body.data.label).toBe('Invoice')
    // The same lens twice in one place is a clash.
    refused(
      await request('POST', ATTACHMENTS, manager.token, { lensId, collection: orders, placement: 'list', label: 'x' }),
      409,
      'already_exists',
    )
    const patched = await request('PATCH', `${ATTACHMENTS}/${record.id}`, manager.token, { label: 'Print invoice' })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({ label: 'Print invoice', placement: 'record' })
    refused(
      await request('PATCH', `${ATTACHMENTS}/${record.id}`, manager.token, { placement: 'list' }),
      409,
      'already_exists',
    )
    for (const attachment of [record, list]) {
      expect((await request('DELETE', `${ATTACHMENTS}/${attachment.id}`, manager.token)).status).toBe(204)
      refused(await request('GET', `${ATTACHMENTS}/${attachment.id}`, manager.token), 404, 'not_found')
    }
    // The lens itself is untouched.
    expect((await request('GET', `/api/v1/lenses/${lensId}`, owner.token)).status).toBe(200)
  })

  it('refuses anonymous callers (401) and callers without the permission (403)', async () => {
    const attachment = await attach({ label: 'Guarded' })
    for (const [method, path, body] of [
      ['GET', ATTACHMENTS, undefined],
      ['GET', `${ATTACHMENTS}/${attachment.id}`, undefined],
      ['POST', ATTACHMENTS, { lensId, collection: orders, placement: 'list', label: 'x' }],
      ['PATCH', `${ATTACHMENTS}/${attachment.id}`, { label: 'y' }],
      ['DELETE', `${ATTACHMENTS}/${attachment.id}`, undefined],
    ] as const) {
      refused(await request(method, path, undefined, body), 401, 'unauthorized')
      refused(await request(method, path, outsider.token, body), 403, 'forbidden')
    }
    refused(await request('DELETE', `${ATTACHMENTS}/${attachment.id}`, viewer.token), 403, 'forbidden')
    expect((await request('GET', `${ATTACHMENTS}/${attachment.id}`, manager.token)).body.data.label).toBe('Guarded')
    expect((await request('DELETE', `${ATTACHMENTS}/${attachment.id}`, manager.token)).status).toBe(204)
  })

  it('refuses an unknown lens, an unknown collection and a bad placement, naming the path', async () => {
    const noLens = await request('POST', ATTACHMENTS, manager.token, {
      lensId: 'f'.repeat(32),
      collection: orders,
      placement: 'record',
      label: 'x',
    })
    refused(noLens, 422, 'validation_error')
    expect(noLens.body.details).toMatchObject({ at: 'lensId' })
    const noCollection = await request('POST', ATTACHMENTS, manager.token, {
      lensId,
      collection: 'no_such_collection',
      placement: 'record',
      label: 'x',
    })
    refused(noCollection, 422, 'validation_error')
    expect(noCollection.body.details).toMatchObject({ at: 'collection' })
    refused(
      await request('POST', ATTACHMENTS, manager.token, { lensId, collection: orders, placement: 'side', label: 'x' }),
      400,
      'invalid_request',
    )
  })
})

describe('another project', () => {
  it("another project's lens id is never accepted, and its attachments are not found here", async () => {
    const project = await request('POST', '/api/v1/projects', owner.token, { name: 'elsewhere' })
    expect(project.status, project.text).toBe(201)
    const there = { 'x-project-id': project.body.data.id as string }
    const created = await request(
      'POST',
      '/api/v1/collections',
      owner.token,
      { name: orders, fields: [{ name: 'title', type: 'text', required: true }] },
      there,
    )
    expect(created.status, created.text).toBe(201)
    const theirLens = await createLens(orders, 'Theirs', there)
    // Their lens id, here: refused even to a super_admin, though a collection of the same name exists here.
    for (const token of [owner.token, manager.token]) {
      const reply = await request('POST', ATTACHMENTS, token, {
        lensId: theirLens,
        collection: orders,
        placement: 'record',
        label: 'x',
      })
      refused(reply, 422, 'validation_error')
      expect(reply.body.details).toMatchObject({ at: 'lensId' })
    }
    const theirs = await request(
      'POST',
      ATTACHMENTS,
      owner.token,
      { lensId: theirLens, collection: orders, placement: 'list', label: 'Theirs' },
      there,
    )
    expect(theirs.status, theirs.text).toBe(201)
    const id = theirs.body.data.id as string
    for (const token of [owner.token, manager.token]) {
      refused(await request('GET', `${ATTACHMENTS}/${id}`, token), 404, 'not_found')
      refused(await request('PATCH', `${ATTACHMENTS}/${id}`, token, { label: 'mine' }), 404, 'not_found')
      refused(await request('DELETE', `${ATTACHMENTS}/${id}`, token), 404, 'not_found')
    }
    expect(
      (await request('GET', `${ATTACHMENTS}?limit=100`, owner.token)).body.data.map((a: any) => a.id),
    ).not.toContain(id)
    // Untouched in its own project.
    const still = await request('GET', `${ATTACHMENTS}/${id}`, owner.token, undefined, there)
    expect(still.body.data).toMatchObject({ label: 'Theirs', lensId: theirLens })
  })
})

describe('cascades', () => {
  it('deleting the lens removes its attachments; other lenses keep theirs', async () => {
    const doomedLens = await createLens(orders)
    const doomed = await attach({ lensId: doomedLens, label: 'Doomed' })
    const doomedList = await attach({ lensId: doomedLens, placement: 'list', label: 'Doomed list' })
    const kept = await attach({ label: 'Kept' })
    expect((await request('DELETE', `/api/v1/lenses/${doomedLens}`, owner.token)).status).toBe(204)
    refused(await request('GET', `${ATTACHMENTS}/${doomed.id}`, manager.token), 404, 'not_found')
    refused(await request('GET', `${ATTACHMENTS}/${doomedList.id}`, manager.token), 404, 'not_found')
    expect((await request('GET', `${ATTACHMENTS}/${kept.id}`, manager.token)).status).toBe(200)
    expect((await request('DELETE', `${ATTACHMENTS}/${kept.id}`, manager.token)).status).toBe(204)
  })

  it('deleting the collection removes its attachments and its renderers', async () => {
    const gone = await createCollection(server, owner.token, freshName('gone'), [
      { name: 'title', type: 'text', required: true },
    ])
    const attached = await attach({ collection: gone, label: 'On gone' })
    const kept = await attach({ label: 'On orders' })
    const renderer = await request('POST', '/api/v1/renderers', owner.token, {
      name: freshName('card'),
      collection: gone,
      kind: 'card',
      template: '{{title}}',
    })
    expect(renderer.status, renderer.text).toBe(201)
    expect((await request('DELETE', `/api/v1/collections/${gone}`, owner.token)).status).toBe(200)
    refused(await request('GET', `${ATTACHMENTS}/${attached.id}`, manager.token), 404, 'not_found')
    expect((await request('GET', `${ATTACHMENTS}?collection=${gone}`, manager.token)).body.total).toBe(0)
    refused(await request('GET', `/api/v1/renderers/${renderer.body.data.id}`, owner.token), 404, 'not_found')
    expect((await request('GET', `${ATTACHMENTS}/${kept.id}`, manager.token)).status).toBe(200)
  })
})
