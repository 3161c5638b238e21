import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'

/**
 * The outbound-address policy of storage connections (addendum §6: loopback, private, link-local and
 * metadata addresses are refused unless ALLOW_PRIVATE_NETWORK). Generic; it lives here until a shared
 * `lib/outbound` exists.
 */

type Range = readonly [prefix: readonly number[], bits: number]

// Written as byte prefixes so one matcher serves both families (IPv4 as its 4 bytes, IPv6 as its 16).
const v4Blocked: readonly Range[] = [
  [[0], 8], // "this" network
  [[10], 8], // private
  [[100, 64], 10], // carrier-grade NAT
  [[127], 8], // loopback
  [[169, 254], 16], // link-local, cloud metadata (169.254.169.254)
  [[172, 16], 12], // private
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2], 24], // documentation
  [[192, 168], 16], // private
  [[198, 18], 15], // benchmarking
  [[198, 51, 100], 24], // documentation
  [[203, 0, 113], 24], // documentation
  [[224], 4], // multicast
  [[240], 4], // reserved and broadcast
]
const v6Blocked: readonly Range[] = [
  [[], 127], // :: and ::1 (the first 127 bits zero)
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64], // discard
  [[0x20, 0x01, 0x0d, 0xb8], 32], // documentation
  [[0xfc], 7], // unique local (includes fd00:ec2::254, a metadata address)
  [[0xfe, 0x80], 10], // link-local
  [[0xfe, 0xc0], 10], // site-local (deprecated)
  [[0xff], 8], // multicast
]

/** True when `address` (an IPv4 or IPv6 literal) must not be reached; anything unparsable counts as blocked. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const family = isIP(bare)
  if (family === 4) return inRanges(ipv4Bytes(bare), v4Blocked)
  if (family !== 6) return true
  const bytes = ipv6Bytes(bare)
  if (!bytes) return true
  const embedded = embeddedIpv4(bytes)
  if (embedded) return inRanges(embedded, v4Blocked)
  return inRanges(bytes, v6Blocked)
}

/** True for host names that always mean this machine (`localhost`, `*.localhost`). */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

export interface BlockedAddressError extends Error {
  code: 'PLINTH_BLOCKED_ADDRESS'
}

export function isBlockedAddressError(err: unknown): err is BlockedAddressError {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'PLINTH_BLOCKED_ADDRESS'
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `dns.lookup` for sockets (an http.Agent's `lookup` option) that refuses a host when any address it
 * resolves to is blocked. The check is made on the addresses the socket then connects to, so a name
 * cannot pass a check and resolve elsewhere a moment later.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, [])
    const blocked = addresses.find((a) => isBlockedAddress(a.address))
    if (blocked || addresses.length === 0) {
      const refused = Object.assign(new Error('Refused: the host resolves to a private, loopback or link-local address'), {
        code: 'PLINTH_BLOCKED_ADDRESS' as const,
      })
      return callback(refused, [])
    }
    if (options.all) return callback(null, addresses)
    const first = addresses[0]!
    callback(null, first.address, first.family)
  })
}

function inRanges(bytes: readonly number[], ranges: readonly Range[]): boolean {
  return ranges.some(([prefix, bits]) => matches(bytes, prefix, bits))
}

function matches(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const byte = bit >> 3
    const mask = 0x80 >> (bit & 7)
    if (((bytes[byte] ?? 0) & mask) !== ((prefix[byte] ?? 0) & mask)) return false
  }
  return true
}

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number)
}

/** The 16 bytes of an IPv6 literal (dotted IPv4 tail allowed), or null. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.split('%')[0]!.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = ipv4Bytes(dotted[1]!) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const head = halves[0] ? halves[0].split(':') : []
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]
  const bytes: number[] = []
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null
    const value = parseInt(group, 16)
    bytes.push(value >> 8, value & 0xff)
  }
  return bytes
}

/** The IPv4 address carried inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6 address. */
function embeddedIpv4(bytes: readonly number[]): number[] | null {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0)
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated; :: and ::1 stay IPv6)
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12)
  if (zeros(0, 12) && !zeros(12, 15)) return bytes.slice(12)
  // 64:ff9b::/96 (NAT64)
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return bytes.slice(12)
  // 2002::/16 (6to4) carries the IPv4 address in bytes 2-5
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6)
  return null
}
