import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServer as createTcpServer, isIP, type Socket } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { Resolver } from './lookup.js'

/** What a test server received. */
export interface Received {
  method: string
  path: string
  headers: IncomingMessage['headers']
  body: string
}

export interface TestServer {
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly received: Received[]
  close(): Promise<void>
}

/** An HTTP server on 127.0.0.1 that records every request, then lets `handle` answer it. */
export async function startTestServer(handle: (req: Received, res: ServerResponse) => void): Promise<TestServer> {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const got = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      received.push(got)
      handle(got, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * A resolver answering made-up names from a table: a list of addresses, or one list per lookup (the last
 * repeats), for a name that changes its answer. Unknown names fail as the system resolver does. Records
 * every name looked up; a name mapped to `'never'` never answers.
 */
export function tableResolver(
  table: Record<string, string[] | string[][] | 'never'>,
): Resolver & { lookups: string[] } {
  const lookups: string[] = []
  const counts = new Map<string, number>()
  const resolve: Resolver = (hostname, _options, callback) => {
    lookups.push(hostname)
    const entry = table[hostname]
    if (entry === 'never') return
    const n = counts.get(hostname) ?? 0
    counts.set(hostname, n + 1)
    setImmediate(() => {
      if (entry === undefined)
        return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), [])
      const answers = Array.isArray(entry[0]) ? (entry as string[][]) : [entry as string[]]
      const addresses = answers[Math.min(n, answers.length - 1)]!
      callback(
        null,
        addresses.map((address) => ({ address, family: isIP(address) })),
      )
    })
  }
  return Object.assign(resolve, { lookups })
}

/** What a hostile server does once it has read a request's head, chosen by the request's path. */
export type HostileBehaviour =
  /** Never answers: no status line, no headers. */
  | 'hang'
  /** Sends part of a status line and headers, then a byte every 50 ms: the head never completes. */
  | 'slow-head'
  /** Sends a 200 head, then one byte of a chunked body every 50 ms, forever. */
  | 'trickle'
  /** Sends a 200 head, then a chunked body as fast as the client reads, forever. */
  | 'endless'
  /** Declares a 4 GiB Content-Length, then sends bytes as fast as the client reads. */
  | 'huge'
  /** A body delimited by the connection's end (no length, not chunked) that never ends. */
  | 'unframed'
  /** A gzip body that never ends: the same 16 MiB-of-zeros member (about 16 KB on the wire) again and again. */
  | 'gzip-bomb'

export interface HostileServer {
  readonly port: number
  /** Connections that have not been closed yet (a client that gave up closes its end). */
  readonly open: () => number
  close(): Promise<void>
}

/**
 * A raw TCP server on 127.0.0.1 speaking just enough HTTP/1.1 to misbehave: the request path's last
 * segment (`/anything/endless`) picks a HostileBehaviour; anything else answers 200 `ok`. It writes only
 * while the client reads (backpressure), so the client's memory, not the server's, is what a test measures.
 */
export async function startHostileServer(): Promise<HostileServer> {
  const member = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 })
  const block = Buffer.alloc(64 * 1024, 120)
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const server = createTcpServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      socket.off('data', onData)
      socket.resume()
      const path = /^[A-Z]+ (\S+) HTTP/.exec(head)?.[1] ?? '/'
      behave(socket, (path.split('?')[0]!.split('/').pop() ?? '') as HostileBehaviour)
    }
    socket.on('data', onData)
  })
  const pump = (socket: Socket, next: () => Buffer) => {
    const go = () => {
      while (!socket.destroyed && socket.write(next()));
      if (!socket.destroyed) socket.once('drain', go)
    }
    go()
  }
  const every = (socket: Socket, ms: number, write: () => void) => {
    const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : write()), ms)
    timers.add(timer)
    socket.on('close', () => {
      clearInterval(timer)
      timers.delete(timer)
    })
  }
  const chunked = (data: Buffer) =>
    Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
  function behave(socket: Socket, behaviour: HostileBehaviour): void {
    switch (behaviour) {
      case 'hang':
        return
      case 'slow-head':
        socket.write('HTTP/1.1 200 OK\r\nX-Slow: ')
        return every(socket, 50, () => socket.write('a'))
      case 'trickle':
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n')
        return every(socket, 50, () => socket.write(chunked(Buffer.from('x'))))
      case 'endless': {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n')
        const framed = chunked(block)
        return pump(socket, () => framed)
      }
      case 'huge':
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${4 * 1024 ** 3}\r\n\r\n`,
        )
        return pump(socket, () => block)
      case 'unframed':
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n')
        return pump(socket, () => block)
      case 'gzip-bomb': {
        socket.write(
          'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n',
        )
        const framed = chunked(member)
        return pump(socket, () => framed)
      }
      default:
        socket.end(
          'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        )
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    open: () => sockets.size,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearInterval(timer)
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
