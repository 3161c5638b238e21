import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError, isAppError } from '../errors.js'
import { drainUnread, refusalBeforeBodyEnd } from './unread-body.js'

// A server that refuses every upload before reading its body, as a route refusing on permission does.
let server: Server
let port: number
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    void refusalBeforeBodyEnd(new AppError('forbidden', 'no', {}, { headers: { Connection: 'close' } }), req).then(
      (err) => {
        const headers = isAppError(err) ? (err.headers ?? {}) : {}
        res.writeHead(403, { 'content-type': 'text/plain', 'content-length': '2', ...headers })
        res.end('no')
      },
    )
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  port = (server.address() as AddressInfo).port
})
afterAll(() => server.close())

/** Sends `head` then, a moment later, `body` on one raw connection; resolves with everything it was answered. */
async function exchange(requests: { head: string; body: string }[]): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  socket.on('error', () => {})
  for (const { head, body } of requests) {
    socket.write(head)
    await new Promise((r) => setTimeout(r, 20))
    socket.write(body)
    const before = received.length
    while (received.length === before && !socket.destroyed) await new Promise((r) => setTimeout(r, 10))
  }
  socket.destroy()
  return received
}

const post = (length: number) =>
  `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\n\r\n`

describe('a refusal answered before the body was read', () => {
  it('reads a short rest first and keeps the connection: a second request on it is answered', async () => {
    const answers = await exchange([
      { head: post(5), body: 'hello' },
      { head: post(3), body: 'abc' },
    ])
    expect(answers.match(/HTTP\/1\.1 403/g)).toHaveLength(2)
    expect(answers.toLowerCase()).not.toContain('connection: close')
  })

  it('does not wait for a rest longer than the limit: the answer closes the connection', async () => {
    const answers = await exchange([{ head: post(5 * 1024 * 1024), body: 'x'.repeat(1000) }])
    expect(answers).toMatch(/^HTTP\/1\.1 403/)
    expect(answers.toLowerCase()).toContain('connection: close')
  })
})

describe('drainUnread', () => {
  it('gives up on a rest that does not arrive in time', async () => {
    const heard = new Promise<boolean>((resolve) => {
      server.once('request', (req: IncomingMessage) => void drainUnread(req, 1024, 50).then(resolve))
    })
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(post(10) + 'abc')
    expect(await heard).toBe(false)
    socket.destroy()
  })
})
