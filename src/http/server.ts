import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import type { Logger } from '../lib/log.js'

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly url: string
  /** Stops accepting, lets in-flight requests finish for up to `timeoutMs`, then cuts what remains. */
  stop(timeoutMs: number): Promise<void>
}

/** Listens on host:port (port 0 picks a free one) and resolves once the socket accepts connections. */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  log: Logger,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }) as Server
    server.once('error', reject)
    server.once('listening', () => {
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
