import { createHash, timingSafeEqual } from 'node:crypto'
import ipaddr from 'ipaddr.js'

/**
 * Whether an Authorization header carries the webhook's shared secret, as `Bearer <secret>` or the bare
 * secret. Both forms are compared on SHA-256 digests (equal length whatever was sent) with
 * timingSafeEqual, and both comparisons always run, so the time taken says nothing about the secret.
 */
export function secretMatches(authorization: string | undefined, secret: string | undefined): boolean {
  if (!authorization || !secret) return false
  const sent = digest(authorization.trim())
  const bare = timingSafeEqual(sent, digest(secret))
  const bearer = timingSafeEqual(sent, digest(`Bearer ${secret}`))
  return bare || bearer
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest()
}

/**
 * Whether `ip` is allowed by `allowlist` (addresses or CIDR ranges, IPv4 or IPv6; an IPv4-mapped IPv6
 * address counts as its IPv4 address). An empty list allows everyone; an entry that does not parse
 * allows no one (the config check refuses such entries on save).
 */
export function ipAllowed(ip: string, allowlist: readonly string[]): boolean {
  if (allowlist.length === 0) return true
  let address: ipaddr.IPv4 | ipaddr.IPv6
  try {
    address = ipaddr.process(ip)
  } catch {
    return false
  }
  return allowlist.some((entry) => {
    const range = parseEntry(entry)
    if (!range || range[0].kind() !== address.kind()) return false
    return address.match(range as [typeof address, number])
  })
}

/** An allowlist entry as a range: a CIDR, or one address as its full-length prefix. Null when it does not parse. */
export function parseEntry(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  // Only dotted quads and IPv6: ipaddr.js also reads "10.1" or octal forms, which nobody means in a list.
  const address = entry.split('/')[0]!
  if (!ipaddr.IPv4.isValidFourPartDecimal(address) && !(address.includes(':') && ipaddr.IPv6.isValid(address)))
    return null
  try {
    if (entry.includes('/')) {
      const [address, bits] = ipaddr.parseCIDR(entry)
      // An IPv4-mapped range is matched as the IPv4 range it stands for.
      if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
        return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96]
      return [address, bits]
    }
    const address = ipaddr.process(entry)
    return [address, address.kind() === 'ipv4' ? 32 : 128]
  } catch {
    return null
  }
}
