import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isBlockedAddress } from './address.js'

export interface BlockedAddressError extends Error {
  code: 'PLINTH_BLOCKED_ADDRESS'
}

/** The error a guarded socket fails with; `what` names the refused destination for the server log. */
export function blockedAddressError(what: string): BlockedAddressError {
  return Object.assign(new Error(`Refused: ${what} is a loopback, private or link-local destination`), {
    code: 'PLINTH_BLOCKED_ADDRESS' as const,
  })
}

/** True for the error of a refused destination, also when a client wrapped it (`cause`, a few levels deep). */
export function isBlockedAddressError(err: unknown): err is BlockedAddressError {
  for (
    let e = err, depth = 0;
    typeof e === 'object' && e !== null && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if ((e as { code?: unknown }).code === 'PLINTH_BLOCKED_ADDRESS') return true
  }
  return false
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** `dns.lookup`'s callback form with `all: true`, the only form a guarded lookup asks of its resolver. */
export type Resolver = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

/** A lookup for sockets: `dns.lookup`'s signature, both callback forms. */
export type SocketLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void

export interface GuardedLookupOptions {
  /** Where names are resolved; `dns.lookup` (the system resolver) unless a test answers for made-up names. */
  resolve?: Resolver
  /** The address rule; `isBlockedAddress` unless a test narrows it. Gets the name being resolved too. */
  isBlocked?: (address: string, hostname: string) => boolean
}

/**
 * A `dns.lookup` for sockets (an http.Agent's or net.connect's `lookup` option) that refuses a host when
 * any address it resolves to is blocked. The check is made on the addresses the socket then connects
 * to, so a name cannot pass a check and resolve elsewhere a moment later (DNS rebinding).
 */
export function createGuardedLookup({
  resolve = dnsLookup as Resolver,
  isBlocked = isBlockedAddress,
}: GuardedLookupOptions = {}): SocketLookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      if (addresses.length === 0 || addresses.some((a) => isBlocked(a.address, hostname)))
        return callback(blockedAddressError(`host ${hostname}`), [])
      if (options.all) return callback(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/** The guarded lookup on the system resolver and the address policy as it is. */
export const guardedLookup: SocketLookup = createGuardedLookup()
