import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../lib/log.js'
import { nodeListener, type Fetch } from './transport.js'

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly url: string
  /** Stops accepting, lets in-flight requests finish for up to `timeoutMs`, then cuts what remains. */
  stop(timeoutMs: number): Promise<void>
}

export interface ListenOptions {
  host: string
  /** 0 picks a free port. */
  port: number
  log: Logger
  /** The request log; defaults to `log`. */
  access?: Logger
}

/** Serves `fetch` over HTTP and resolves once the socket accepts connections. */
export function listen(fetch: Fetch, options: ListenOptions): Promise<RunningServer> {
  const { log } = options
  return new Promise((resolve, reject) => {
    const server = createServer(nodeListener(fetch, options.access ?? log))
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      const address = server.address() as AddressInfo
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
      resolve({
        server,
        port: address.port,
        url: `http://${shownHost}:${address.port}`,
        stop: (timeoutMs) => stopServer(server, timeoutMs, log),
      })
    })
  })
}

function stopServer(server: Server, timeoutMs: number, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      log.warn({ timeoutMs }, 'shutdown timeout reached; closing open connections')
      server.closeAllConnections()
    }, timeoutMs)
    // Keep-alive connections hold close() open; drop each one as soon as its request is answered.
    const sweep = setInterval(() => server.closeIdleConnections(), 50)
    server.close(() => {
      clearTimeout(timer)
      clearInterval(sweep)
      resolve()
    })
    server.closeIdleConnections()
  })
}
