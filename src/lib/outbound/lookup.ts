import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isBlockedAddress } from './address.js'

export interface BlockedAddressError extends Error {
  code: 'PLINTH_BLOCKED_ADDRESS'
}

/** The error a guarded socket fails with; `what` names the refused destination for the server log. */
export function blockedAddressError(what: string): BlockedAddressError {
  return Object.assign(new Error(`Refused: ${what} is a loopback, private or link-local destination`), { code: 'PLINTH_BLOCKED_ADDRESS' as const })
}

/** True for the error of a refused destination, also when a client wrapped it (`cause`, a few levels deep). */
export function isBlockedAddressError(err: unknown): err is BlockedAddressError {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'PLINTH_BLOCKED_ADDRESS') return true
  }
  return false
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `dns.lookup` for sockets (an http.Agent's or net.connect's `lookup` option) that refuses a host when
 * any address it resolves to is blocked. The check is made on the addresses the socket then connects
 * to, so a name cannot pass a check and resolve elsewhere a moment later (DNS rebinding).
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, [])
    if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) return callback(blockedAddressError(`host ${hostname}`), [])
    if (options.all) return callback(null, addresses)
    const first = addresses[0]!
    callback(null, first.address, first.family)
  })
}
