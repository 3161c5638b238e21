import type { ServerResponse } from 'node:http'
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
import { createCollection, createRecord, field, uniqueName } from './collections-support.js'

/**
 * Where a collection webhook may send (issue 25, deliver item 5; docs/webhooks.md), the attacks
 * webhooks.test.ts does not already make, with ALLOW_PRIVATE_NETWORK off:
 *
 * - on save (POST and PATCH), 400 `invalid_request` naming `url`: private, shared, link-local, metadata,
 *   multicast and unspecified IPv4 literals; IPv6 loopback, link-local, unique-local and every form that
 *   carries a refused IPv4 address (mapped, compatible, translated, NAT64, 6to4); the same addresses
 *   spelled in decimal, octal, hex, shortened or with a trailing dot; `localhost` in its spellings; and a
 *   URL with a user name or password;
 * - on delivery (a name is judged when sent): a name resolving to the metadata address, to a private
 *   one, to an IPv4-mapped loopback, or to a public and a private address at once; a redirect to a
 *   metadata, mapped, decimal or private-name address; a redirect to a URL with credentials or to
 *   `file:`. Each ends `failed` after one attempt, and nothing reaches the refused address.
 *
 * The receiver listens on 127.0.0.1 and is reached as `receiver.test`, the one host let through.
 */

const BASE = '/api/v1/webhooks'

let server: TestServer
let receiver: Receiver
let owner: Account
let base: string

const receivedAt = (path: string): Received[] => receiver.received.filter((r) => r.path.startsWith(path))

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function collection(): Promise<string> {
  const name = uniqueName('target')
  await createCollection(server, owner.token, { name, fields: [field('title', 'text')] })
  return name
}

/** A webhook to `url`, one record written, and its delivery once settled. */
async function deliveredTo(url: string): Promise<any> {
  const name = await collection()
  const made = await server.request('POST', BASE, {
    token: owner.token,
    body: { collection: name, events: ['record.create'], url },
  })
  expect(made.status, made.text).toBe(201)
  await createRecord(server, owner.token, name, { title: 'x' })
  const [delivery] = await until(
    async () =>
      (await server.request('GET', `${BASE}/${made.body.data.id}/deliveries`, { token: owner.token })).body
        .data as any[],
    (rows) => rows.length === 1 && ['success', 'failed'].includes(rows[0].status),
    `the delivery to ${url}`,
  )
  return delivery
}

beforeAll(async () => {
  receiver = await startTestServer((req: Received, res: ServerResponse) => {
    const url = new URL(req.path, 'http://x')
    if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to')! }).end()
    res.writeHead(200).end('{}')
  })
  const resolve = tableResolver({
    'receiver.test': ['127.0.0.1'],
    'metadata.test': ['169.254.169.254'],
    'private.test': ['10.0.0.5'],
    'mapped.test': ['::ffff:127.0.0.1'],
    // A public address first: the name is refused for its private one all the same, and nothing is contacted.
    'mixed.test': ['93.184.216.34', '127.0.0.1'],
  })
  server = await startServer(
    {},
    {
      outbound: { resolve, isBlocked: (address, host) => host !== 'receiver.test' && isBlockedAddress(address) },
      webhookDelivery: { backoffMs: 1 },
    },
  )
  owner = await signUpOwner(server)
  base = `http://receiver.test:${receiver.port}`
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

const refusedOnSave: [string, string[]][] = [
  [
    'private, shared, link-local, metadata, multicast and unspecified IPv4',
    [
      'http://10.0.0.1/x',
      'http://172.16.0.1/x',
      'http://192.168.1.1/x',
      'http://100.64.0.1/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0/x',
      'http://0/x',
      'http://127.0.0.2/x',
      'http://198.18.0.1/x',
      'http://224.0.0.1/x',
      'http://255.255.255.255/x',
    ],
  ],
  [
    'IPv6 loopback, unspecified, link-local, unique-local (AWS fd00:ec2::254) and IPv4 carried inside IPv6',
    [
      'http://[::1]/x',
      'http://[::]/x',
      'http://[fe80::1]/x',
      'http://[fc00::1]/x',
      'http://[fd00:ec2::254]/latest',
      'http://[::ffff:127.0.0.1]/x',
      'http://[::ffff:7f00:1]/x',
      'http://[0:0:0:0:0:ffff:127.0.0.1]/x',
      'http://[::ffff:169.254.169.254]/x',
      'http://[::127.0.0.1]/x',
      'http://[::ffff:0:127.0.0.1]/x',
      'http://[64:ff9b::a9fe:a9fe]/x',
      'http://[2002:a9fe:a9fe::1]/x',
    ],
  ],
  [
    'decimal, octal, hex, shortened and trailing-dot spellings',
    [
      'http://2130706433/x',
      'http://0x7f000001/x',
      'http://017700000001/x',
      'http://0177.0.0.1/x',
      'http://0x7f.0.0.1/x',
      'http://127.1/x',
      'http://127.0.1/x',
      'http://2852039166/x',
      'http://0xa9.0xfe.0xa9.0xfe/x',
      'http://0251.0376.0251.0376/x',
      'http://10.1/x',
      'http://3232235777/x',
      'http://127.0.0.1./x',
      'http://\uff10x7f.1/x',
    ],
  ],
  [
    'localhost in its spellings',
    [
      'http://localhost/x',
      'http://LOCALHOST:8080/x',
      'http://localhost./x',
      'http://api.localhost/x',
      'http://%6c%6fcalhost/x',
    ],
  ],
]

describe('refused on save: 400 invalid_request naming url, on POST and on PATCH; nothing saved or changed', () => {
  it.each(refusedOnSave)('%s', async (_what, urls) => {
    const name = await collection()
    const kept = await server.request('POST', BASE, {
      token: owner.token,
      body: { collection: name, events: ['record.create'], url: `${base}/kept` },
    })
    expect(kept.status, kept.text).toBe(201)
    for (const url of urls) {
      const created = await server.request('POST', BASE, {
        token: owner.token,
        body: { collection: name, events: ['record.create'], url },
      })
      expect(created.status, `POST ${url}: ${created.text}`).toBe(400)
      expect(created.body, url).toMatchObject({ error: 'invalid_request', details: { fields: ['url'] } })
      const moved = await server.request('PATCH', `${BASE}/${kept.body.data.id}`, { token: owner.token, body: { url } })
      expect(moved.status, `PATCH ${url}: ${moved.text}`).toBe(400)
      expect(moved.body, url).toMatchObject({ error: 'invalid_request', details: { fields: ['url'] } })
    }
    const list = (await server.request('GET', BASE, { token: owner.token })).body.data.filter(
      (w: any) => w.collection === name,
    )
    expect(list.map((w: any) => w.url)).toEqual([`${base}/kept`])
  })

  it('a URL with a user name or password (credentials would travel in the clear and in logs)', async () => {
    const name = await collection()
    const kept = await server.request('POST', BASE, {
      token: owner.token,
      body: { collection: name, events: ['record.create'], url: `${base}/kept` },
    })
    for (const url of [
      `http://user:pass@receiver.test:${receiver.port}/x`,
      `http://user@receiver.test:${receiver.port}/x`,
      `http://:pass@receiver.test:${receiver.port}/x`,
      'https://user:pass@example.com/x',
    ]) {
      expect(
        (
          await server.request('POST', BASE, {
            token: owner.token,
            body: { collection: name, events: ['record.create'], url },
          })
        ).status,
        url,
      ).toBe(400)
      expect(
        (await server.request('PATCH', `${BASE}/${kept.body.data.id}`, { token: owner.token, body: { url } })).status,
        url,
      ).toBe(400)
    }
    expect((await server.request('GET', `${BASE}/${kept.body.data.id}`, { token: owner.token })).body.data.url).toBe(
      `${base}/kept`,
    )
  })
})

describe('blocked on delivery: failed after one attempt, nothing reached', () => {
  it.each([
    ['the metadata address', 'metadata.test'],
    ['a private address', 'private.test'],
    ['an IPv4-mapped loopback', 'mapped.test'],
    ['a public and a private address at once', 'mixed.test'],
  ])('a name resolving to %s: blocked_address', async (_what, host) => {
    const delivery = await deliveredTo(`http://${host}:${receiver.port}/by-name-${host}`)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, error: 'blocked_address' })
    expect(receivedAt(`/by-name-${host}`)).toEqual([])
  })

  const redirects = (): [string, string, string][] => [
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/iam/', 'blocked_address'],
    ['an IPv4-mapped loopback literal', `http://[::ffff:127.0.0.1]:${receiver.port}/redirected`, 'blocked_address'],
    ['a decimal loopback literal', `http://2130706433:${receiver.port}/redirected`, 'blocked_address'],
    ['a name resolving to the metadata address', `http://metadata.test:${receiver.port}/redirected`, 'blocked_address'],
    ['a URL with credentials', `http://user:pass@receiver.test:${receiver.port}/redirected`, 'bad_url'],
    ['a file: URL', 'file:///etc/passwd', 'bad_url'],
  ]
  it('a redirect to a refused target: failed on the first hop, the target never reached', async () => {
    for (const [what, to, error] of redirects()) {
      const delivery = await deliveredTo(`${base}/redirect?to=${encodeURIComponent(to)}`)
      expect(delivery, what).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, error })
    }
    expect(receivedAt('/redirect')).toHaveLength(redirects().length)
    expect(receivedAt('/redirected')).toEqual([])
  })
})
