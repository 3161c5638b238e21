import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isIP } from 'node:net'
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
      const got = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
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
export function tableResolver(table: Record<string, string[] | string[][] | 'never'>): Resolver & { lookups: string[] } {
  const lookups: string[] = []
  const counts = new Map<string, number>()
  const resolve: Resolver = (hostname, _options, callback) => {
    lookups.push(hostname)
    const entry = table[hostname]
    if (entry === 'never') return
    const n = counts.get(hostname) ?? 0
    counts.set(hostname, n + 1)
    setImmediate(() => {
      if (entry === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), [])
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
