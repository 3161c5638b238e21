import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from './address.js'
import { OutboundError } from './errors.js'
import { outboundFetch, type OutboundInit, type OutboundOptions } from './fetch.js'
import { startTestServer, tableResolver, type TestServer } from './test-servers.js'

// The outbound-address rule as a user of outboundFetch meets it: every test here fails without the
// guard it names (the request reaches the server on 127.0.0.1, or hangs on the refused address).

/** The error outboundFetch rejected with, or null when it answered. */
async function failure(url: string, options: OutboundOptions, init: OutboundInit = {}): Promise<OutboundError | null> {
  try {
    await outboundFetch(url, { timeoutMs: 3_000, ...init }, options)
    return null
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err
    return err
  }
}

let target: TestServer
beforeAll(async () => {
  target = await startTestServer((_req, res) => res.end('private data'))
})
afterAll(() => target.close())
afterEach(() => {
  target.received.length = 0
})

const guarded: OutboundOptions = { allowPrivateNetwork: false }

describe('address literals (checked before connecting)', () => {
  const hosts = [
    '127.0.0.1',
    '127.0.0.1.',
    '2130706433',
    '017700000001',
    '0x7f.1',
    '0.0.0.0',
    '0',
    'localhost',
    'LOCALHOST.',
    'api.localhost',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::ffff:0:127.0.0.1]',
    '[::127.0.0.1]',
    '[::1]',
  ]
  for (const host of hosts) {
    it(`refuses http://${host}:<port>/ and never reaches the server`, async () => {
      const err = await failure(`http://${host}:${target.port}/`, guarded)
      expect(err?.code).toBe('blocked_address')
      expect(target.received).toHaveLength(0)
    })
  }

  for (const host of [
    '[::ffff:10.0.0.1]',
    '[::ffff:a9fe:a9fe]',
    '169.254.169.254',
    '10.0.0.1',
    '100.64.0.1',
    '[fd00:ec2::254]',
    '[fe80::1]',
  ]) {
    it(`refuses http://${host}/ (private, link-local, CGNAT, unique-local, metadata)`, async () => {
      expect((await failure(`http://${host}/latest/meta-data/`, guarded, { timeoutMs: 1_000 }))?.code).toBe(
        'blocked_address',
      )
    })
  }
})

describe('names (checked on the addresses the socket connects to)', () => {
  const resolve = tableResolver({
    'metadata.test': ['169.254.169.254'],
    'loopback.test': ['127.0.0.1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'mixed.test': ['8.8.8.8', '127.0.0.1'],
    'cgnat.test': ['100.64.0.1'],
    'unique-local.test': ['fd00::1'],
  })
  const options = { ...guarded, resolve }

  it('refuses a name resolving to 169.254.169.254', async () => {
    expect((await failure('http://metadata.test/latest/meta-data/', options, { timeoutMs: 1_000 }))?.code).toBe(
      'blocked_address',
    )
  })

  for (const name of ['loopback.test', 'mapped.test', 'mixed.test']) {
    it(`refuses ${name} (resolves to loopback) and never reaches the server`, async () => {
      expect((await failure(`http://${name}:${target.port}/`, options))?.code).toBe('blocked_address')
      expect(target.received).toHaveLength(0)
    })
  }

  for (const name of ['cgnat.test', 'unique-local.test']) {
    it(`refuses ${name}`, async () => {
      expect((await failure(`http://${name}/`, options, { timeoutMs: 1_000 }))?.code).toBe('blocked_address')
    })
  }

  it('names the host in the message, not the path or query', async () => {
    const err = await failure('http://metadata.test/path?token=s3cret', options, { timeoutMs: 1_000 })
    expect(err?.message).toContain('metadata.test')
    expect(err?.message).not.toMatch(/s3cret|path/)
  })
})

describe('redirects (every hop is checked)', () => {
  // The first server stands for a public one: the rule is narrowed to let `allowed.test` (127.0.0.1) through.
  const resolve = tableResolver({
    'allowed.test': ['127.0.0.1'],
    'metadata.test': ['169.254.169.254'],
    'loopback.test': ['127.0.0.1'],
  })
  const options: OutboundOptions = {
    allowPrivateNetwork: false,
    resolve,
    isBlocked: (address, host) => host !== 'allowed.test' && isBlockedAddress(address),
  }
  let allowed: TestServer
  beforeAll(async () => {
    allowed = await startTestServer((req, res) => {
      const to = new URL(req.path, 'http://x').searchParams.get('to')
      res.writeHead(to ? 302 : 200, to ? { location: to } : {}).end('public')
    })
  })
  afterAll(() => allowed.close())

  it('reaches the allowed server (the narrowing works)', async () => {
    const res = await outboundFetch(`http://allowed.test:${allowed.port}/`, {}, options)
    expect(res.text()).toBe('public')
  })

  const targets = () => [
    `http://127.0.0.1:${target.port}/`,
    `http://localhost:${target.port}/`,
    `http://[::ffff:127.0.0.1]:${target.port}/`,
    `http://loopback.test:${target.port}/`,
  ]
  for (const index of [0, 1, 2, 3]) {
    it(`refuses a redirect from the allowed server to loopback (#${index + 1}) and never reaches it`, async () => {
      const to = targets()[index]!
      const err = await failure(`http://allowed.test:${allowed.port}/?to=${encodeURIComponent(to)}`, options)
      expect(err?.code).toBe('blocked_address')
      expect(target.received).toHaveLength(0)
    })
  }

  it('refuses a redirect to a name resolving to the metadata address', async () => {
    const err = await failure(
      `http://allowed.test:${allowed.port}/?to=${encodeURIComponent('http://metadata.test/latest/')}`,
      options,
      { timeoutMs: 1_000 },
    )
    expect(err?.code).toBe('blocked_address')
  })

  it('refuses the second redirect of a chain as well as the first', async () => {
    const second = `http://allowed.test:${allowed.port}/?to=${encodeURIComponent(`http://127.0.0.1:${target.port}/`)}`
    const err = await failure(`http://allowed.test:${allowed.port}/?to=${encodeURIComponent(second)}`, options)
    expect(err?.code).toBe('blocked_address')
    expect(target.received).toHaveLength(0)
  })
})

describe('pinning (no DNS-rebinding window)', () => {
  // 127.0.0.2 stands for a public address (nothing listens there); the name then turns to 127.0.0.1.
  const options = (resolve: OutboundOptions['resolve']): OutboundOptions => ({
    allowPrivateNetwork: false,
    resolve,
    isBlocked: (address) => address !== '127.0.0.2' && isBlockedAddress(address),
  })

  it('connects to the address that was checked: a name answering public, then 127.0.0.1, never reaches 127.0.0.1', async () => {
    const resolve = tableResolver({ 'rebind.test': [['127.0.0.2'], ['127.0.0.1']] })
    const err = await failure(`http://rebind.test:${target.port}/`, options(resolve))
    expect(err?.code).toBe('network')
    expect(target.received).toHaveLength(0)
    expect(resolve.lookups).toEqual(['rebind.test'])
  })
})

describe('ALLOW_PRIVATE_NETWORK', () => {
  const open: OutboundOptions = {
    allowPrivateNetwork: true,
    resolve: tableResolver({ 'loopback.test': ['127.0.0.1'] }),
  }

  it('lifts the rule for literals, names and redirects', async () => {
    expect((await outboundFetch(`${target.origin}/`, {}, open)).text()).toBe('private data')
    expect((await outboundFetch(`http://loopback.test:${target.port}/`, {}, open)).status).toBe(200)
    const redirector = await startTestServer((_req, res) => res.writeHead(302, { location: `${target.origin}/` }).end())
    try {
      const res = await outboundFetch(`${redirector.origin}/`, {}, open)
      expect(res.text()).toBe('private data')
      expect(res.redirected).toBe(true)
    } finally {
      await redirector.close()
    }
  })
})
