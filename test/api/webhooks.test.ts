import { createHmac, randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import {
  startTestServer,
  tableResolver,
  type Received,
  type TestServer as Receiver,
} from '../../src/lib/outbound/test-servers.js'
import { startServer, type Reply, type TestAppOptions, type TestServer } from '../support/harness.js'
import { testDatabaseUrl } from '../support/postgres.js'
import { startSibling } from '../support/sibling.js'
import { signUpOwner, createAccount, type Account } from '../support/identity.js'
import { accountWithGrants, createCollection, createRecord, field, uniqueName } from './collections-support.js'

/**
 * Collection webhooks (core-api § Events; issue 16 item 5) over real HTTP, on SQLite and PostgreSQL: the
 * CRUD and its refusals; secrets and header values sealed and read as the mask (never in a reply, a log
 * line, the audit log or the delivery log); deliveries of record events signed with the spec's HMAC and
 * verified by a receiving server; a receiver answering 500 twice then 200 gets the delivery on the third
 * attempt, recorded in the log; private addresses refused (a literal on save; a name resolving to one and
 * a redirect to one on delivery, with nothing reaching them).
 *
 * ALLOW_PRIVATE_NETWORK is off. The receiver listens on 127.0.0.1 and is reached as `receiver.test`, the
 * one host the address rule is narrowed to let through (lib/outbound's test hooks); `private.test`
 * resolves to 127.0.0.1 and stays refused.
 */

const BASE = '/api/v1/webhooks'
const MASK = '\u2022'.repeat(8)
const SECRET = `whsec-${randomBytes(12).toString('hex')}`
const ROTATED = `whsec-rotated-${randomBytes(12).toString('hex')}`
const HEADER_TOKEN = `hdr-${randomBytes(12).toString('hex')}`

let server: TestServer
let receiver: Receiver
let owner: Account
let base: string
/** Every reply of this file, to search for the secrets at the end. */
const replies: Reply[] = []
/** What each receiver path answers, in order; the last repeats. */
const scripts = new Map<string, number[]>()
const hits = new Map<string, number>()

const call = async (method: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> => {
  const reply = await server.request(method, path, { token, body })
  replies.push(reply)
  return reply
}
const receivedAt = (path: string): Received[] => receiver.received.filter((r) => r.path === path)
const hmac = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
const deliveries = async (id: string, token = owner.token): Promise<any[]> => {
  const reply = await call('GET', `${BASE}/${id}/deliveries`, token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}
const settled = (id: string, count = 1) =>
  until(
    () => deliveries(id),
    (list) =>
      list.length >= count && list.slice(0, count).every((d) => d.status === 'success' || d.status === 'failed'),
    `deliveries of ${id}`,
  )

async function collection(): Promise<string> {
  const name = uniqueName('hooked')
  await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
  return name
}
async function webhook(body: Record<string, unknown>): Promise<Record<string, any>> {
  const reply = await call('POST', BASE, owner.token, {
    events: ['record.create', 'record.update', 'record.delete'],
    ...body,
  })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.data
}

/** ALLOW_PRIVATE_NETWORK stays off; receiver.test alone is let through; retries at once (1 ms, 2 ms…): tests wait for outcomes, never for time. */
function appOptions(): TestAppOptions {
  const resolve = tableResolver({ 'receiver.test': ['127.0.0.1'], 'private.test': ['127.0.0.1'] })
  return {
    outbound: { resolve, isBlocked: (address, host) => host !== 'receiver.test' && isBlockedAddress(address) },
    webhookDelivery: { backoffMs: 1 },
  }
}

beforeAll(async () => {
  receiver = await startTestServer((req: Received, res: ServerResponse) => {
    const n = (hits.get(req.path) ?? 0) + 1
    hits.set(req.path, n)
    if (req.path === '/to-loopback')
      return void res.writeHead(307, { location: `http://127.0.0.1:${receiver.port}/redirected` }).end()
    if (req.path === '/to-private')
      return void res.writeHead(302, { location: `http://private.test:${receiver.port}/redirected` }).end()
    const script = scripts.get(req.path) ?? [200]
    res.writeHead(script[Math.min(n - 1, script.length - 1)]!).end('{}')
  })
  server = await startServer({}, appOptions())
  owner = await signUpOwner(server)
  base = `http://receiver.test:${receiver.port}`
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

describe('POST /api/v1/webhooks', () => {
  it('saves a webhook: 201 with the secret and header values as the mask, the secret sealed in its row', async () => {
    const name = await collection()
    const reply = await call('POST', BASE, owner.token, {
      collection: name,
      events: ['record.create'],
      url: `${base}/ok`,
      secret: SECRET,
      headers: { Authorization: `Bearer ${HEADER_TOKEN}` },
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: `${name} webhook`,
      collection: name,
      events: ['record.create'],
      url: `${base}/ok`,
      secret: MASK,
      hasSecret: true,
      headers: { Authorization: MASK },
      active: true,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    })
    const row = await server.app.registry.system.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', reply.body.data.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(row)).not.toContain(SECRET)
    expect(JSON.stringify(row)).not.toContain(HEADER_TOKEN)
    expect(row.secret_sealed).toMatch(/^v1\./)
  })
  it('without a secret: hasSecret false, secret null', async () => {
    const hook = await webhook({ collection: await collection(), url: `${base}/ok` })
    expect(hook).toMatchObject({ secret: null, hasSecret: false, headers: {} })
  })
  it('refuses bad bodies with 400 and saves nothing', async () => {
    const name = await collection()
    const bad: Record<string, unknown>[] = [
      { collection: name, events: [], url: `${base}/ok` },
      { collection: name, events: ['record.created'], url: `${base}/ok` },
      { collection: name, events: ['record.create', 'record.create'], url: `${base}/ok` },
      { collection: name, events: ['record.create'], url: 'ftp://example.com/x' },
      { collection: name, events: ['record.create'], url: 'https://user:pass@example.com/x' },
      { collection: name, events: ['record.create'], url: 'not a url' },
      { collection: name, events: ['record.create'], url: `${base}/ok`, headers: { 'bad name': 'x' } },
      { collection: name, events: ['record.create'], url: `${base}/ok`, secret: '' },
      { collection: name, events: ['record.create'], url: `${base}/ok`, extra: 1 },
      { events: ['record.create'], url: `${base}/ok` },
    ]
    for (const body of bad) expect((await call('POST', BASE, owner.token, body)).status, JSON.stringify(body)).toBe(400)
    expect((await call('GET', BASE, owner.token)).body.data.filter((w: any) => w.collection === name)).toEqual([])
  })
  it('refuses a loopback, private or link-local literal (ALLOW_PRIVATE_NETWORK is off)', async () => {
    const name = await collection()
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://10.0.0.1/x',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
      'http://2130706433/x',
    ]) {
      const reply = await call('POST', BASE, owner.token, { collection: name, events: ['record.create'], url })
      expect(reply.status, url).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_request', details: { fields: ['url'] } })
    }
  })
  it('a missing collection is 404 collection_not_found', async () => {
    const reply = await call('POST', BASE, owner.token, {
      collection: 'nope_nothing',
      events: ['record.create'],
      url: `${base}/ok`,
    })
    expect(reply.status).toBe(404)
    expect(reply.body.error).toBe('collection_not_found')
  })
})

describe('who may manage webhooks', () => {
  it('needs system/webhooks: an editor is refused (403)', async () => {
    const editor = await createAccount(server, owner.token, { role: 'editor' })
    const name = await collection()
    expect((await call('GET', BASE, editor.token)).status).toBe(403)
    expect(
      (await call('POST', BASE, editor.token, { collection: name, events: ['record.create'], url: `${base}/ok` }))
        .status,
    ).toBe(403)
  })
  it('a webhook sends whole records, so it needs read on every row and field: a row-filtered reader is refused, a whole reader is not', async () => {
    const name = await collection()
    const limited = await accountWithGrants(server, owner.token, [{ resource: 'system/webhooks', action: 'manage' }])
    const filtered = await call('POST', `/api/v1/roles`, owner.token, { name: uniqueName('rowscoped') })
    expect(filtered.status, filtered.text).toBe(201)
    const grants = [
      { resource: 'system/webhooks', action: 'manage' },
      { resource: `collections/${name}`, action: 'read', item_filter: { created_by: { _eq: '$CURRENT_USER' } } },
    ]
    expect((await call('PUT', `/api/v1/roles/${filtered.body.data.id}/grants`, owner.token, { grants })).status).toBe(
      200,
    )
    const scoped = await createAccount(server, owner.token, { role: filtered.body.data.name })
    const whole = await accountWithGrants(server, owner.token, [
      { resource: 'system/webhooks', action: 'manage' },
      { resource: `collections/${name}`, action: 'read' },
    ])
    const body = { collection: name, events: ['record.create'], url: `${base}/ok` }
    expect((await call('POST', BASE, limited.token, body)).status).toBe(403)
    const refused = await call('POST', BASE, scoped.token, body)
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.error).toBe('forbidden')
    const made = await call('POST', BASE, whole.token, body)
    expect(made.status, made.text).toBe(201)
    // Nor can a webhook be moved onto a collection its editor may not read whole.
    const other = await collection()
    expect((await call('PATCH', `${BASE}/${made.body.data.id}`, whole.token, { collection: other })).status).toBe(403)
  })
})

describe('GET, PATCH, DELETE', () => {
  it('lists and gets, masked; PATCH keeps a masked or omitted secret, rotates a new one, null removes it', async () => {
    const hook = await webhook({
      collection: await collection(),
      url: `${base}/ok`,
      secret: SECRET,
      headers: { 'X-Token': HEADER_TOKEN },
    })
    expect((await call('GET', `${BASE}/${hook.id}`, owner.token)).body.data).toEqual(hook)
    expect((await call('GET', BASE, owner.token)).body.data).toContainEqual(hook)
    const renamed = await call('PATCH', `${BASE}/${hook.id}`, owner.token, {
      name: 'Renamed',
      secret: MASK,
      headers: { 'X-Token': MASK, 'X-More': 'm' },
    })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body.data).toMatchObject({
      name: 'Renamed',
      secret: MASK,
      hasSecret: true,
      headers: { 'X-Token': MASK, 'X-More': MASK },
    })
    const target = await server.app.services.webhooks.target(server.app.defaultProject.id, hook.id)
    expect(target).toMatchObject({ secret: SECRET, headers: { 'X-Token': HEADER_TOKEN, 'X-More': 'm' } })
    expect((await call('PATCH', `${BASE}/${hook.id}`, owner.token, { secret: ROTATED })).status).toBe(200)
    expect((await server.app.services.webhooks.target(server.app.defaultProject.id, hook.id))?.secret).toBe(ROTATED)
    const removed = await call('PATCH', `${BASE}/${hook.id}`, owner.token, { secret: null })
    expect(removed.body.data).toMatchObject({ secret: null, hasSecret: false })
  })
  it('DELETE answers 204 and the webhook is gone (404 after)', async () => {
    const hook = await webhook({ collection: await collection(), url: `${base}/ok` })
    expect((await call('DELETE', `${BASE}/${hook.id}`, owner.token)).status).toBe(204)
    expect((await call('GET', `${BASE}/${hook.id}`, owner.token)).status).toBe(404)
    expect((await call('DELETE', `${BASE}/${hook.id}`, owner.token)).status).toBe(404)
    expect((await call('GET', `${BASE}/${hook.id}/deliveries`, owner.token)).status).toBe(404)
  })
  it('another project sees none of them: list empty, get/patch/delete/deliveries 404', async () => {
    const hook = await webhook({ collection: await collection(), url: `${base}/ok`, secret: SECRET })
    const project = await call('POST', '/api/v1/projects', owner.token, { name: uniqueName('elsewhere') })
    expect(project.status, project.text).toBe(201)
    const there = { 'X-Project-Id': project.body.data.id as string }
    const listed = await server.request('GET', BASE, { token: owner.token, headers: there })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data).toEqual([])
    expect((await server.request('GET', `${BASE}/${hook.id}`, { token: owner.token, headers: there })).status).toBe(404)
    expect(
      (
        await server.request('PATCH', `${BASE}/${hook.id}`, {
          token: owner.token,
          headers: there,
          body: { url: `${base}/stolen` },
        })
      ).status,
    ).toBe(404)
    expect(
      (await server.request('GET', `${BASE}/${hook.id}/deliveries`, { token: owner.token, headers: there })).status,
    ).toBe(404)
    expect((await server.request('DELETE', `${BASE}/${hook.id}`, { token: owner.token, headers: there })).status).toBe(
      404,
    )
    expect((await call('GET', `${BASE}/${hook.id}`, owner.token)).body.data.url).toBe(`${base}/ok`)
  })
  it('a deleted collection takes its webhooks with it', async () => {
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/ok` })
    expect((await call('DELETE', `/api/v1/collections/${name}`, owner.token)).status).toBe(200)
    expect((await call('GET', `${BASE}/${hook.id}`, owner.token)).status).toBe(404)
  })
})

describe('deliveries', () => {
  it('a record event is POSTed as JSON, signed: the receiver verifies X-Service-Signature with the secret; the log shows success', async () => {
    const name = await collection()
    const hook = await webhook({
      collection: name,
      url: `${base}/signed`,
      secret: SECRET,
      headers: { 'X-Token': HEADER_TOKEN },
      events: ['record.create'],
    })
    const record = await createRecord(server, owner.token, name, { title: 'hello' })
    const [delivery] = await settled(hook.id)
    expect(delivery).toEqual({
      id: expect.any(String),
      webhookId: hook.id,
      event: 'record.create',
      collection: name,
      recordId: record.id,
      status: 'success',
      attempts: 1,
      responseStatus: 200,
      durationMs: expect.any(Number),
      error: null,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      attemptLog: [{ attempt: 1, at: expect.any(Number), status: 200, durationMs: expect.any(Number), error: null }],
    })
    const [got] = receivedAt('/signed')
    expect(got!.method).toBe('POST')
    expect(got!.headers['content-type']).toBe('application/json')
    // The receiver's check: HMAC-SHA256 of the exact body, keyed with the secret.
    expect(got!.headers['x-service-signature']).toBe(hmac(SECRET, got!.body))
    expect(got!.headers['x-service-signature']).not.toBe(hmac('another secret', got!.body))
    expect(Date.parse(String(got!.headers['x-service-timestamp']))).not.toBeNaN()
    expect(got!.headers['x-service-event']).toBe('record.create')
    expect(got!.headers['x-service-delivery']).toBe(delivery.id)
    expect(got!.headers['x-token']).toBe(HEADER_TOKEN)
    const payload = JSON.parse(got!.body)
    expect(payload).toMatchObject({
      event: 'record.create',
      webhookId: hook.id,
      deliveryId: delivery.id,
      collection: name,
      before: null,
      after: { id: record.id, title: 'hello' },
    })
    expect(got!.body).not.toContain(SECRET)
  })
  it('only the events it listens to, of its own collection', async () => {
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/updates-only`, events: ['record.update'] })
    const record = await createRecord(server, owner.token, name, { title: 'one' })
    await createRecord(server, owner.token, await collection(), { title: 'elsewhere' })
    expect(
      (await call('PATCH', `/api/v1/collections/${name}/records/${record.id}`, owner.token, { title: 'two' })).status,
    ).toBe(200)
    const [delivery] = await settled(hook.id)
    expect(delivery).toMatchObject({ event: 'record.update', status: 'success' })
    expect((await deliveries(hook.id)).length).toBe(1)
    expect(JSON.parse(receivedAt('/updates-only')[0]!.body)).toMatchObject({
      event: 'record.update',
      changes: { title: { before: 'one', after: 'two' } },
    })
  })
  it('a receiver answering 500 twice then 200 gets the delivery on the third attempt, recorded in the log', async () => {
    scripts.set('/flaky', [500, 500, 200])
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/flaky`, secret: SECRET, events: ['record.create'] })
    await createRecord(server, owner.token, name, { title: 'retry me' })
    const [delivery] = await settled(hook.id)
    expect(delivery).toMatchObject({ status: 'success', attempts: 3, responseStatus: 200, error: null })
    expect(delivery.attemptLog.map((a: any) => [a.attempt, a.status, a.error])).toEqual([
      [1, 500, 'http_500'],
      [2, 500, 'http_500'],
      [3, 200, null],
    ])
    const got = receivedAt('/flaky')
    expect(got).toHaveLength(3)
    // The same body every time, each signed.
    expect(new Set(got.map((r) => r.body)).size).toBe(1)
    for (const r of got) expect(r.headers['x-service-signature']).toBe(hmac(SECRET, r.body))
  })
  it('a 4xx other than 408 and 429 is final: failed after one attempt', async () => {
    scripts.set('/gone', [410])
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/gone`, events: ['record.create'] })
    await createRecord(server, owner.token, name, { title: 'x' })
    const [delivery] = await settled(hook.id)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, responseStatus: 410, error: 'http_410' })
  })
  it('gives up after the last attempt (6 sends), failed', async () => {
    scripts.set('/down', [503])
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/down`, events: ['record.create'] })
    await createRecord(server, owner.token, name, { title: 'x' })
    const [delivery] = await settled(hook.id)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 6, responseStatus: 503, error: 'http_503' })
    expect(receivedAt('/down')).toHaveLength(6)
  })
  it('settled deliveries leave the log after 30 days (the daily prune)', async () => {
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/pruned`, events: ['record.create'] })
    await createRecord(server, owner.token, name, { title: 'x' })
    await settled(hook.id)
    const day = 24 * 60 * 60 * 1000
    await server.app.services.webhooks.pruneDeliveries(Date.now() + 29 * day)
    expect(await deliveries(hook.id)).toHaveLength(1)
    expect(await server.app.services.webhooks.pruneDeliveries(Date.now() + 31 * day)).toBeGreaterThanOrEqual(1)
    expect(await deliveries(hook.id)).toEqual([])
  })
  it('an inactive webhook gets nothing', async () => {
    const name = await collection()
    const hook = await webhook({ collection: name, url: `${base}/inactive`, events: ['record.create'], active: false })
    await createRecord(server, owner.token, name, { title: 'x' })
    const live = await webhook({ collection: name, url: `${base}/live`, events: ['record.create'] })
    await createRecord(server, owner.token, name, { title: 'y' })
    await settled(live.id)
    expect(await deliveries(hook.id)).toEqual([])
    expect(receivedAt('/inactive')).toEqual([])
  })
})

describe('deliveries refuse private addresses', () => {
  it('a name resolving to a private address: failed blocked_address, not retried, nothing reaches it', async () => {
    // A path of its own: deliveries of earlier tests may still reach the receiver elsewhere.
    const name = await collection()
    const hook = await webhook({
      collection: name,
      url: `http://private.test:${receiver.port}/private-name`,
      secret: SECRET,
      events: ['record.create'],
    })
    await createRecord(server, owner.token, name, { title: 'x' })
    const [delivery] = await settled(hook.id)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, error: 'blocked_address' })
    expect(receivedAt('/private-name')).toEqual([])
  })
  it('a redirect to a loopback address or to a private name: failed blocked_address after the first hop', async () => {
    for (const path of ['/to-loopback', '/to-private']) {
      const name = await collection()
      const hook = await webhook({ collection: name, url: `${base}${path}`, events: ['record.create'] })
      await createRecord(server, owner.token, name, { title: 'x' })
      const [delivery] = await settled(hook.id)
      expect(delivery, path).toMatchObject({ status: 'failed', attempts: 1, error: 'blocked_address' })
      expect(receivedAt(path)).toHaveLength(1)
      // The redirects' target (a path nothing else uses) was never reached.
      expect(receivedAt('/redirected')).toEqual([])
    }
  })
})

describe('secrets stay secret', () => {
  it('no reply, log line or audit entry of this file holds a secret or a header value', async () => {
    const audit = await call('GET', '/api/v1/audit-log?limit=100', owner.token)
    expect(audit.status, audit.text).toBe(200)
    for (const secret of [SECRET, ROTATED, HEADER_TOKEN]) {
      for (const reply of replies) expect(reply.text).not.toContain(secret)
      expect(server.logs.join('\n')).not.toContain(secret)
    }
    const rows = await server.app.registry.system.db.selectFrom('webhook_deliveries').selectAll().execute()
    for (const secret of [SECRET, ROTATED, HEADER_TOKEN]) expect(JSON.stringify(rows)).not.toContain(secret)
  })
})

describe.runIf(testDatabaseUrl() && process.env.TEST_REDIS_URL)('two instances (PostgreSQL + Redis)', () => {
  let a: TestServer
  let b: TestServer
  let admin: Account

  beforeAll(async () => {
    a = await startServer({}, appOptions())
    b = await startSibling(a, {}, appOptions())
    admin = await signUpOwner(a)
  })
  afterAll(async () => {
    await b?.stop()
    await a?.stop()
  })

  it('a webhook saved through A hears the writes made through B at once (B had cached the project with none)', async () => {
    const name = uniqueName('twice')
    await createCollection(a, admin.token, { name, fields: [field('title', 'text')] })
    await createRecord(b, admin.token, name, { title: 'before any webhook' })
    const made = await a.request('POST', BASE, {
      token: admin.token,
      body: { collection: name, events: ['record.create'], url: `${base}/two-instances`, secret: SECRET },
    })
    expect(made.status, made.text).toBe(201)
    await createRecord(b, admin.token, name, { title: 'after' })
    const list = await until(
      async () =>
        (await b.request('GET', `${BASE}/${made.body.data.id}/deliveries`, { token: admin.token })).body.data as any[],
      (rows) => rows.length === 1 && rows[0].status === 'success',
      'the delivery',
    )
    expect(list[0]).toMatchObject({ status: 'success', attempts: 1 })
    const got = receivedAt('/two-instances')
    expect(got).toHaveLength(1)
    expect(JSON.parse(got[0]!.body)).toMatchObject({ after: { title: 'after' } })
    expect(got[0]!.headers['x-service-signature']).toBe(hmac(SECRET, got[0]!.body))
  })
})
