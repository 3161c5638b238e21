import type { ServerResponse } from 'node:http'
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddress } from './address.js'
import { OutboundError } from './errors.js'
import { createOutboundClient, outboundFetch, type OutboundInit, type OutboundOptions } from './fetch.js'
import { startTestServer, tableResolver, type TestServer } from './test-servers.js'

// What outboundFetch does with redirects, time and size, against real servers on 127.0.0.1 (the address
// rule is lifted here; fetch-guard.test.ts covers it).
const open: OutboundOptions = { allowPrivateNetwork: true }

async function failure(url: string, init: OutboundInit = {}, options: OutboundOptions = open): Promise<OutboundError> {
  try {
    await outboundFetch(url, init, options)
  } catch (err) {
    if (err instanceof OutboundError) return err
    throw err
  }
  throw new Error('expected the request to fail')
}

const never = () => {}

let server: TestServer
let other: TestServer
beforeAll(async () => {
  const routes = (origin: () => string) => (req: { method: string; path: string }, res: ServerResponse) => {
    const url = new URL(req.path, 'http://x')
    const p = url.pathname
    const redirect = /^\/redirect\/(\d+)$/.exec(p)
    if (redirect)
      return res.writeHead(Number(redirect[1]), { location: url.searchParams.get('to') ?? '/echo' }).end('moved')
    const chain = /^\/chain\/(\d+)$/.exec(p)
    if (chain) {
      const n = Number(chain[1])
      return n === 0 ? res.end('end of chain') : res.writeHead(302, { location: `/chain/${n - 1}` }).end()
    }
    switch (p) {
      case '/loop':
        return res.writeHead(302, { location: '/loop' }).end()
      case '/echo':
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ origin: origin(), ...req }))
      case '/hang':
        return never()
      case '/trickle':
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.write('first bytes')
        return never()
      case '/declared-large':
        res.writeHead(200, { 'content-length': String(1024 * 1024) })
        return res.write('x'.repeat(10)) // and no more: only the declared length can refuse it
      case '/endless': {
        // Chunked and never ending: only a limit counted while reading can stop it.
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        const chunk = Buffer.alloc(16 * 1024, 120)
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump)
        }
        return pump()
      }
      case '/gzip':
        return res
          .writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' })
          .end(gzipSync('hello, compressed'))
      case '/bomb':
        return res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(8 * 1024 * 1024)))
      case '/corrupt-gzip':
        return res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all')
      case '/exact':
        return res.end('x'.repeat(100))
      default:
        res.writeHead(404).end('no such path')
    }
  }
  server = await startTestServer((req, res) => routes(() => server.origin)(req, res))
  other = await startTestServer((req, res) => routes(() => other.origin)(req, res))
})
afterAll(async () => {
  await server.close()
  await other.close()
})
afterEach(() => {
  server.received.length = 0
  other.received.length = 0
})

describe('a plain request', () => {
  it('sends the method, headers and body, and answers status, headers, body, url', async () => {
    const res = await outboundFetch(
      `${server.origin}/echo?q=1`,
      { method: 'post', headers: { 'content-type': 'text/plain', 'x-a': '1' }, body: 'héllo' },
      open,
    )
    expect(res.status).toBe(200)
    expect(res.statusText).toBe('OK')
    expect(res.headers.get('content-type')).toBe('application/json')
    expect(res.url).toBe(`${server.origin}/echo?q=1`)
    expect(res.redirected).toBe(false)
    const echoed = res.json() as { method: string; path: string; body: string; headers: Record<string, string> }
    expect(echoed).toMatchObject({ method: 'POST', path: '/echo?q=1', body: 'héllo' })
    expect(echoed.headers).toMatchObject({
      'content-type': 'text/plain',
      'x-a': '1',
      'content-length': String(Buffer.byteLength('héllo')),
      'user-agent': 'Plinth',
    })
  })

  it('answers a 404 as a response, not an error', async () => {
    const res = await outboundFetch(`${server.origin}/missing`, {}, open)
    expect([res.status, res.text()]).toEqual([404, 'no such path'])
  })

  it('ignores Host, Content-Length and Transfer-Encoding given by the caller', async () => {
    const res = await outboundFetch(
      `${server.origin}/echo`,
      {
        method: 'POST',
        headers: { host: 'evil.example', 'content-length': '999', 'transfer-encoding': 'chunked' },
        body: 'ab',
      },
      open,
    )
    const { headers } = res.json() as { headers: Record<string, string> }
    expect(headers.host).toBe(`127.0.0.1:${server.port}`)
    expect(headers['content-length']).toBe('2')
    expect(headers['transfer-encoding']).toBeUndefined()
  })

  it('decodes a gzip body', async () => {
    expect((await outboundFetch(`${server.origin}/gzip`, {}, open)).text()).toBe('hello, compressed')
  })

  it('reports a body that does not decode as network', async () => {
    const err = await failure(`${server.origin}/corrupt-gzip`)
    expect([err.code, err.networkCode]).toEqual(['network', 'Z_DATA_ERROR'])
  })

  it('works through a client bound to its options', async () => {
    const client = createOutboundClient(open)
    expect((await client.fetch(`${server.origin}/exact`)).text()).toHaveLength(100)
  })
})

describe('bad input', () => {
  const urls: [string, string][] = [
    ['not a url', 'bad_url'],
    ['/relative/path', 'bad_url'],
    ['ftp://example.com/file', 'bad_url'],
    ['file:///etc/passwd', 'bad_url'],
    ['javascript:alert(1)', 'bad_url'],
    ['http://user:s3cret@example.com/', 'bad_url'],
    ['http://:s3cret@example.com/', 'bad_url'],
  ]
  for (const [url, code] of urls) {
    it(`${url} → ${code}, the URL not quoted`, async () => {
      const err = await failure(url)
      expect(err.code).toBe(code)
      expect(err.message).not.toContain('s3cret')
      expect(err.message).not.toContain(url)
    })
  }

  it('refuses a header value that cannot be sent, without quoting it', async () => {
    const err = await failure(`${server.origin}/echo`, { headers: { authorization: 'Bearer s3cret\r\nx: y' } })
    expect(err.code).toBe('bad_request')
    expect(err.message).not.toContain('s3cret')
    expect(server.received).toHaveLength(0)
  })

  for (const method of ['CONNECT', 'TRACE', 'GET /x', '']) {
    it(`refuses the method ${JSON.stringify(method)}`, async () => {
      expect((await failure(`${server.origin}/echo`, { method })).code).toBe('bad_request')
    })
  }

  for (const init of [
    { timeoutMs: 0 },
    { timeoutMs: Number.NaN },
    { connectTimeoutMs: -1 },
    { maxResponseBytes: 0 },
    { maxRedirects: -1 },
    { maxRedirects: 1.5 },
  ]) {
    it(`refuses the limits ${JSON.stringify(init)}`, async () => {
      expect((await failure(`${server.origin}/echo`, init)).code).toBe('bad_request')
    })
  }

  it('reports a closed port as network, without the path or query', async () => {
    const closed = await startTestServer(() => {})
    await closed.close()
    const err = await failure(`http://127.0.0.1:${closed.port}/path?token=s3cret`)
    expect(err.code).toBe('network')
    expect(err.networkCode).toBe('ECONNREFUSED')
    expect(err.message).not.toMatch(/s3cret|path/)
  })

  it('reports a name that does not resolve as network', async () => {
    const err = await failure('http://nowhere.test/', {}, { allowPrivateNetwork: true, resolve: tableResolver({}) })
    expect([err.code, err.networkCode]).toEqual(['network', 'ENOTFOUND'])
  })
})

describe('redirects', () => {
  const rewritten: [status: number, method: string, expected: string][] = [
    [301, 'POST', 'GET'],
    [302, 'POST', 'GET'],
    [303, 'POST', 'GET'],
    [303, 'PUT', 'GET'],
    [307, 'POST', 'POST'],
    [308, 'PUT', 'PUT'],
    [307, 'DELETE', 'DELETE'],
  ]
  for (const [status, method, expected] of rewritten) {
    it(`${status} after ${method} → ${expected}${expected === method ? ' with the body' : ' without a body'}`, async () => {
      const res = await outboundFetch(
        `${server.origin}/redirect/${status}`,
        { method, headers: { 'content-type': 'text/plain' }, body: 'payload' },
        open,
      )
      expect(res.status).toBe(200)
      expect(res.redirected).toBe(true)
      expect(res.url).toBe(`${server.origin}/echo`)
      const last = server.received.at(-1)!
      expect(last.method).toBe(expected)
      if (expected === method) {
        expect(last.body).toBe('payload')
        expect(last.headers['content-type']).toBe('text/plain')
      } else {
        expect(last.body).toBe('')
        expect(last.headers['content-type']).toBeUndefined()
        expect(last.headers['content-length']).toBeUndefined()
      }
    })
  }

  it('303 after HEAD → HEAD', async () => {
    await outboundFetch(`${server.origin}/redirect/303`, { method: 'HEAD' }, open)
    expect(server.received.map((r) => r.method)).toEqual(['HEAD', 'HEAD'])
  })

  it('answers 300 and 304 as they are', async () => {
    expect((await outboundFetch(`${server.origin}/redirect/300`, {}, open)).status).toBe(300)
    expect((await outboundFetch(`${server.origin}/redirect/304`, {}, open)).status).toBe(304)
  })

  it('follows up to maxRedirects (5 by default) and refuses one more', async () => {
    expect((await outboundFetch(`${server.origin}/chain/5`, {}, open)).text()).toBe('end of chain')
    expect((await failure(`${server.origin}/chain/6`)).code).toBe('too_many_redirects')
    expect((await outboundFetch(`${server.origin}/chain/2`, { maxRedirects: 2 }, open)).text()).toBe('end of chain')
    expect((await failure(`${server.origin}/chain/1`, { maxRedirects: 0 })).code).toBe('too_many_redirects')
  })

  it('stops at a redirect loop', async () => {
    expect((await failure(`${server.origin}/loop`)).code).toBe('too_many_redirects')
    expect(server.received).toHaveLength(6)
  })

  it('answers the redirect itself with redirect: manual', async () => {
    const res = await outboundFetch(`${server.origin}/redirect/302?to=/echo`, { redirect: 'manual' }, open)
    expect([res.status, res.headers.get('location'), res.redirected]).toEqual([302, '/echo', false])
  })

  for (const location of [
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_FLUSHALL',
    'http://user:s3cret@example.com/',
  ]) {
    it(`refuses a redirect to ${location} as bad_url`, async () => {
      const err = await failure(`${server.origin}/redirect/302?to=${encodeURIComponent(location)}`)
      expect(err.code).toBe('bad_url')
      expect(err.message).not.toContain('s3cret')
    })
  }

  const credentials = {
    authorization: 'Bearer s3cret',
    cookie: 'session=s3cret',
    'x-api-key': 's3cret',
    'x-other': 'kept',
  }

  it('drops Authorization, Cookie and named credential headers on a cross-origin redirect', async () => {
    const to = encodeURIComponent(`${other.origin}/echo`)
    const res = await outboundFetch(
      `${server.origin}/redirect/307?to=${to}`,
      { headers: credentials, credentialHeaders: ['X-API-Key'] },
      open,
    )
    expect(res.url).toBe(`${other.origin}/echo`)
    const { headers } = other.received.at(-1)!
    expect(headers.authorization).toBeUndefined()
    expect(headers.cookie).toBeUndefined()
    expect(headers['x-api-key']).toBeUndefined()
    expect(headers['x-other']).toBe('kept')
    expect(server.received.at(-1)!.headers.authorization).toBe('Bearer s3cret')
  })

  it('drops every header whose name carries a credential on a cross-origin redirect, named or not', async () => {
    const to = encodeURIComponent(`${other.origin}/echo`)
    const sent = {
      'x-api-key': 's3cret',
      'x-auth-token': 's3cret',
      'x-client-secret': 's3cret',
      apikey: 's3cret',
      'x-trace': 'kept',
    }
    await outboundFetch(`${server.origin}/redirect/307?to=${to}`, { headers: sent }, open)
    const { headers } = other.received.at(-1)!
    expect(JSON.stringify(headers)).not.toContain('s3cret')
    expect(headers['x-trace']).toBe('kept')
    expect(server.received.at(-1)!.headers['x-auth-token']).toBe('s3cret')
  })

  it('keeps them on a same-origin redirect', async () => {
    await outboundFetch(
      `${server.origin}/redirect/302?to=/echo`,
      { headers: credentials, credentialHeaders: ['x-api-key'] },
      open,
    )
    expect(server.received.at(-1)!.headers).toMatchObject({
      authorization: 'Bearer s3cret',
      cookie: 'session=s3cret',
      'x-api-key': 's3cret',
    })
  })

  it('treats another host name for the same address as another origin', async () => {
    const named = { allowPrivateNetwork: true, resolve: tableResolver({ 'other-name.test': ['127.0.0.1'] }) }
    const to = encodeURIComponent(`http://other-name.test:${server.port}/echo`)
    await outboundFetch(`${server.origin}/redirect/302?to=${to}`, { headers: credentials }, named)
    expect(server.received.at(-1)!.headers.authorization).toBeUndefined()
  })
})

describe('timeouts', () => {
  it('times out when no answer comes', async () => {
    const err = await failure(`${server.origin}/hang`, { timeoutMs: 300 })
    expect(err.code).toBe('timeout')
  })

  it('times out while the body trickles: the total timeout covers the body', async () => {
    expect((await failure(`${server.origin}/trickle`, { timeoutMs: 300 })).code).toBe('timeout')
  })

  it('times out connecting (a resolver that never answers)', async () => {
    const err = await failure(
      'http://slow-dns.test/',
      { connectTimeoutMs: 200, timeoutMs: 5_000 },
      { allowPrivateNetwork: true, resolve: tableResolver({ 'slow-dns.test': 'never' }) },
    )
    expect(err.code).toBe('timeout')
    expect(err.message).toContain('connect')
  })

  it('stops when the caller aborts: aborted, or timeout for a TimeoutError reason', async () => {
    const controller = new AbortController()
    const pending = failure(`${server.origin}/hang`, { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    expect((await pending).code).toBe('aborted')
    expect((await failure(`${server.origin}/hang`, { signal: AbortSignal.timeout(100) })).code).toBe('timeout')
    expect((await failure(`${server.origin}/echo`, { signal: AbortSignal.abort() })).code).toBe('aborted')
  })
})

describe('response size', () => {
  it('refuses a body declared larger than the limit (Content-Length)', async () => {
    const err = await failure(`${server.origin}/declared-large`, { maxResponseBytes: 1000, timeoutMs: 5_000 })
    expect(err.code).toBe('too_large')
  })

  it('refuses a chunked body once it passes the limit, without waiting for its end', async () => {
    const err = await failure(`${server.origin}/endless`, { maxResponseBytes: 256 * 1024, timeoutMs: 20_000 })
    expect(err.code).toBe('too_large')
  })

  it('counts decoded bytes: a small gzip body that expands past the limit is refused', async () => {
    expect((await failure(`${server.origin}/bomb`, { maxResponseBytes: 1024 * 1024 })).code).toBe('too_large')
  })

  it('accepts a body exactly at the limit', async () => {
    expect((await outboundFetch(`${server.origin}/exact`, { maxResponseBytes: 100 }, open)).body.byteLength).toBe(100)
    expect((await failure(`${server.origin}/exact`, { maxResponseBytes: 99 })).code).toBe('too_large')
  })
})

describe('TLS', () => {
  let tls: TlsServer
  const servernames: (string | undefined)[] = []
  beforeAll(async () => {
    // No certificate: the handshake stops after the ClientHello, which is all this needs to see.
    tls = createTlsServer({
      SNICallback: (servername, callback) => {
        servernames.push(servername)
        callback(new Error('no certificate here'))
      },
    })
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
  })
  afterAll(() => new Promise<void>((resolve) => tls.close(() => resolve())))

  it('sends the host name as SNI, not the address it resolved to', async () => {
    const { port } = tls.address() as AddressInfo
    const err = await failure(
      `https://secure.test:${port}/`,
      {},
      { allowPrivateNetwork: true, resolve: tableResolver({ 'secure.test': ['127.0.0.1'] }) },
    )
    expect(err.code).toBe('network')
    expect(servernames).toEqual(['secure.test'])
  })
})

describe('sockets(): the same rule for clients with their own sockets', () => {
  it('refuses literal blocked addresses and loopback names unless private addresses are allowed', () => {
    const guarded = createOutboundClient({ allowPrivateNetwork: false }).sockets()
    for (const host of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '[::1]', 'localhost'])
      expect(guarded.refusesHost(host), host).toBe(true)
    expect(guarded.refusesHost('example.com')).toBe(false)
    expect(guarded.refusesHost('93.184.216.34')).toBe(false)
    expect(guarded.lookup).toBeTypeOf('function')
    const open = createOutboundClient({ allowPrivateNetwork: true }).sockets()
    expect(open.refusesHost('127.0.0.1')).toBe(false)
    expect(open.lookup).toBeUndefined()
  })
  it('its lookup refuses a name resolving to a private address, and keeps a narrowed rule', async () => {
    const resolve = tableResolver({ 'inside.test': ['10.1.2.3'], 'allowed.test': ['127.0.0.1'] })
    const { lookup } = createOutboundClient({
      allowPrivateNetwork: false,
      resolve,
      isBlocked: (address, host) => host !== 'allowed.test' && isBlockedAddress(address),
    }).sockets()
    const look = (host: string) =>
      new Promise<unknown>((done) =>
        lookup!(host, {}, (err, address) => done(err ? (err as { code?: string }).code : address)),
      )
    expect(await look('inside.test')).toBe('PLINTH_BLOCKED_ADDRESS')
    expect(await look('allowed.test')).toBe('127.0.0.1')
  })
})
