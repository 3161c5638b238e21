import type { Context } from 'hono'
import type { AppEnv } from './env.js'

/**
 * The client's IP address. From the socket, unless `trustProxy`: then the last X-Forwarded-For entry,
 * the one appended by the (single) proxy in front of Plinth; earlier entries are the client's to forge.
 */
export function clientIp(c: Context<AppEnv>, trustProxy: boolean): string {
  const incoming = c.env?.incoming
  if (trustProxy) {
    const forwarded = incoming?.headers['x-forwarded-for']
    const list = Array.isArray(forwarded) ? forwarded.join(',') : forwarded
    const last = list
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .pop()
    if (last) return last
  }
  return incoming?.socket.remoteAddress ?? 'unknown'
}
