import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maxHeaderBytes } from '../../src/http/server.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { createCollection, createRecord, expectError, recordsPath } from './records-fixtures.js'

// What Node's HTTP parser refuses before the app sees a request still answers in the envelope, with the
// headers of every response; a query string as long as the filter limit allows fits under the header limit.

let server: TestServer
let owner: Account
const notes = 'limit_notes'

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  await createCollection(server, owner.token, notes, [{ name: 'title', type: 'text', required: false }])
  await createRecord(server, owner.token, notes, { title: 'kept' })
})
afterAll(async () => {
  await server?.stop()
})

/** Every byte as %XX: the longest URL a filter of this JSON can make. */
const percentEncoded = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')

/** A filter of exactly `size` characters of JSON: `title` in a list of strings, the last one matching. */
function filterOf(size: number): string {
  const values: string[] = []
  const build = () => JSON.stringify({ title: { _in: [...values, 'kept'] } })
  while (build().length + 40 < size) values.push('x'.repeat(35))
  values.push('y'.repeat(size - build().length - 3))
  const text = build()
  expect(text.length).toBe(size)
  return text
}

function expectTransportHeaders(headers: Headers): void {
  expect(headers.get('x-api-version')).toBe('v1')
  expect(headers.get('x-request-id')).toMatch(/^[\w.:-]{1,128}$/)
}

/** Writes raw bytes on a fresh connection and returns everything the server sends until it closes. */
function rawExchange(request: string): Promise<string> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

describe('long URLs', () => {
  it('a 16 KiB filter, every byte percent-encoded, gets a real answer', async () => {
    const filter = filterOf(16_384)
    const path = `${recordsPath(notes)}?filter=${percentEncoded(filter)}`
    expect(path.length).toBeGreaterThan(3 * 16_384)
    const reply = await server.request('GET', path, { token: owner.token })
    expectTransportHeaders(reply.headers)
    // Within every filter limit: the list answers (the filter's list holds at most 500 values).
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.map((r: { title: string }) => r.title)).toEqual(['kept'])
  })

  it('a filter past 16 KiB is refused by the filter checks, in the envelope', async () => {
    const reply = await server.request('GET', `${recordsPath(notes)}?filter=${percentEncoded(filterOf(16_385))}`, {
      token: owner.token,
    })
    expectTransportHeaders(reply.headers)
    expectError(reply, 400, 'invalid_request')
  })

  it('a URL past the header limit is 431 in the envelope, with the version and request id headers', async () => {
    const reply = await server.request('GET', `${recordsPath(notes)}?filter=${'a'.repeat(maxHeaderBytes + 1024)}`, {
      token: owner.token,
    })
    expect(reply.status).toBe(431)
    expectTransportHeaders(reply.headers)
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/)
    expectError(reply, 431, 'headers_too_large')
    expect(reply.body.details).toEqual({ limit: maxHeaderBytes })
  })

  it('a client still sending its oversized headers gets the 431 in the envelope', async () => {
    const { hostname, port } = new URL(server.url)
    const answer = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = []
      const socket = connect(Number(port), hostname, () => {
        socket.write(`GET /health?x=${'a'.repeat(maxHeaderBytes + 1024)}`)
        // Keep the headers coming after the server has refused them.
        const more = setInterval(() => {
          if (socket.writable) socket.write('a'.repeat(16 * 1024))
        }, 5)
        socket.on('close', () => clearInterval(more))
      })
      socket.on('data', (chunk: Buffer) => chunks.push(chunk))
      socket.on('error', () => {}) // a write after the server's end; the answer is what counts
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
    })
    const [head, body] = answer.split('\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1\.1 431 /)
    expect(head).toMatch(/\r\nX-API-Version: v1\r\n/i)
    expect(JSON.parse(body!)).toMatchObject({ error: 'headers_too_large', details: { limit: maxHeaderBytes } })
  })

  it('the server keeps serving after refusing a request', async () => {
    expect((await server.request('GET', `/health?x=${'a'.repeat(maxHeaderBytes + 1)}`)).status).toBe(431)
    expect((await server.request('GET', '/health')).status).toBe(200)
  })
})

describe('malformed requests', () => {
  it.each([
    ['a header line without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
    ['a bad Content-Length', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
  ])('%s is 400 in the envelope, with the version and request id headers', async (_, request) => {
    const answer = await rawExchange(request)
    const [head, body] = answer.split('\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1\.1 400 /)
    expect(head).toMatch(/\r\nX-API-Version: v1\r\n/i)
    expect(head).toMatch(/\r\nX-Request-ID: [\w.:-]{1,128}\r\n/i)
    expect(head).toMatch(/\r\nContent-Type: application\/json\r\n/i)
    expect(JSON.parse(body!)).toEqual({ error: 'invalid_request', message: 'Malformed HTTP request', details: {} })
  })

  it('a client that keeps its side open after the answer is disconnected after a grace period', async () => {
    const { hostname, port } = new URL(server.url)
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () =>
        socket.write('GET /health HTTP/1.1\r\nno colon\r\n\r\n'),
      )
      socket.resume()
      // The answer ends the server's side; ours stays open. Once the grace period (2 s) is over the server
      // has closed the connection: what we send then is answered with a reset, seen on the next write.
      const send = () => socket.writable && socket.write('still here')
      socket.once('end', () =>
        setTimeout(() => {
          send()
          setTimeout(send, 200)
        }, 3000),
      )
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
      setTimeout(() => resolve('still open'), 6000)
    })
    expect(['ECONNRESET', 'EPIPE']).toContain(outcome)
  })
})

describe('keep-alive', () => {
  // A server that drops idle connections before its clients do makes their next request on the socket a
  // reset (ECONNRESET, or a 502 behind a load balancer that keeps connections 60 s).
  it('idle connections are kept 65 s, longer than load balancers keep theirs, and the hint says so', async () => {
    const kept = await new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(server.url)
      const socket = connect(Number(port), hostname, () => socket.write('GET /health HTTP/1.1\r\nHost: plinth\r\n\r\n'))
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk.toString('utf8'))
        socket.destroy()
      })
      socket.on('error', reject)
    })
    expect(kept).toMatch(/^HTTP\/1\.1 200/)
    expect(kept.toLowerCase()).toContain('keep-alive: timeout=65')
  })
})
