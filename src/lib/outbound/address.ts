import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * The outbound-address policy (addendum §6): what this server may connect to on a caller's behalf
 * unless ALLOW_PRIVATE_NETWORK (or, for database bindings, a super_admin) says otherwise. An IPv4
 * address passes only when it is ordinary unicast; an IPv6 address only when it is global unicast
 * (2000::/3 outside the special-purpose blocks) or a form that embeds an IPv4 address that passes.
 */
export interface AddressVerdict {
  readonly blocked: boolean
  /** The range that decided: `unicast`, `loopback`, `private`, `ipv4Mapped(loopback)`, `teredo`… */
  readonly range: string
}

const v6 = (cidr: string): [ipaddr.IPv6, number] => ipaddr.IPv6.parseCIDR(cidr)

// IPv6 forms that carry an IPv4 address or tunnel to one, checked before anything else. Order matters
// (the first match wins): Teredo sits inside 2001::/23 and global unicast.
const v6Forms = {
  ipv4Compatible: [v6('::/96')], // deprecated (RFC 4291 §2.5.5.1); holds :: and ::1 too
  ipv4Mapped: [v6('::ffff:0:0/96')],
  ipv4Translated: [v6('::ffff:0:0:0/96')], // SIIT (RFC 2765, RFC 6145)
  nat64: [v6('64:ff9b::/96')], // well-known prefix (RFC 6052)
  nat64Local: [v6('64:ff9b:1::/48')], // local-use prefixes (RFC 8215); where the IPv4 sits depends on the length
  sixToFour: [v6('2002::/16')], // RFC 3056: the IPv4 address in bits 16-47
  teredo: [v6('2001::/32')], // RFC 4380: the client's IPv4 address, obfuscated, in the last 32 bits
  global: [v6('2000::/3')],
}

/** How `address` (an IPv4 or IPv6 literal; brackets and a zone id allowed) is judged. Unparsable is blocked. */
export function judgeAddress(address: string): AddressVerdict {
  const parsed = parseAddress(address)
  if (!parsed) return { blocked: true, range: 'invalid' }
  return parsed.kind() === 'ipv4' ? judgeIpv4(parsed as ipaddr.IPv4) : judgeIpv6(parsed as ipaddr.IPv6)
}

/** True when `address` must not be reached; anything unparsable counts as blocked. */
export function isBlockedAddress(address: string): boolean {
  return judgeAddress(address).blocked
}

/** True for host names that always mean this machine (`localhost`, `*.localhost`). */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost')
}

/**
 * True when a URL's host is refused without resolving it: an address literal in a refused range (any
 * spelling the resolver would accept as an address, `2130706433` and `0x7f.1` included) or a loopback
 * name. Other names are checked when a socket resolves them (guardedLookup).
 */
export function isBlockedHost(hostname: string): boolean {
  if (isLoopbackName(hostname)) return true
  const bare = unbracket(hostname)
  if (isIP(withoutZone(bare)) === 0 && !ipaddr.IPv4.isValid(bare)) return false
  return isBlockedAddress(bare)
}

function judgeIpv4(address: ipaddr.IPv4): AddressVerdict {
  const range = address.range()
  return { blocked: range !== 'unicast', range }
}

function judgeIpv6(address: ipaddr.IPv6): AddressVerdict {
  const form = ipaddr.subnetMatch(address, v6Forms, 'other')
  const p = address.parts
  switch (form) {
    case 'ipv4Mapped':
    case 'ipv4Translated':
    case 'nat64':
      return embedded(form, p[6]!, p[7]!)
    case 'sixToFour':
      return embedded(form, p[1]!, p[2]!)
    case 'global': {
      const range = address.range()
      if (range !== 'unicast') return { blocked: true, range }
      // ISATAP (RFC 5214): an interface identifier 0[0-3]00:5efe followed by the IPv4 address.
      if ((p[4]! & 0xfcff) === 0 && p[5] === 0x5efe) return embedded('isatap', p[6]!, p[7]!)
      return { blocked: false, range }
    }
    case 'other': {
      // Outside 2000::/3: link-local, unique-local, multicast, discard… or unassigned space.
      const range = address.range()
      return { blocked: true, range: range === 'unicast' ? 'unassigned' : range }
    }
    default:
      return { blocked: true, range: form }
  }
}

/** The verdict on the IPv4 address held in two 16-bit groups, named after the form that carried it. */
function embedded(form: string, high: number, low: number): AddressVerdict {
  const inner = judgeIpv4(new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]))
  return { blocked: inner.blocked, range: `${form}(${inner.range})` }
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = withoutZone(unbracket(address))
  if (isIP(bare) === 6) {
    // ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`; the socket layer (inet_pton) reads the IPv4-compatible
    // `::a.b.c.d` it is, which libuv also prints for such an address that DNS returns.
    const compatible = /^::(\d+\.\d+\.\d+\.\d+)$/.exec(bare)
    if (compatible)
      return new ipaddr.IPv6([
        0,
        0,
        0,
        0,
        0,
        0,
        ...ipaddr.IPv4.parse(compatible[1]!).toIPv4MappedAddress().parts.slice(6),
      ])
    return ipaddr.IPv6.parse(bare)
  }
  // Besides dotted quads, the resolver reads `2130706433`, `127.1` and `0x7f.0.0.1` as addresses; so does ipaddr.
  if (ipaddr.IPv4.isValid(bare)) return ipaddr.IPv4.parse(bare)
  return null
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/** `fe80::1%eth0` → `fe80::1`. The zone only picks an interface; the address decides where it goes. */
function withoutZone(address: string): string {
  const at = address.indexOf('%')
  return at === -1 ? address : address.slice(0, at)
}
