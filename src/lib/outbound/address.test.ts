import { describe, expect, it } from 'vitest'
import { isBlockedAddress, isBlockedHost, isLoopbackName, judgeAddress } from './address.js'

// [address, blocked, the range that decided]
const rows: [string, boolean, string][] = [
  // IPv4: only ordinary unicast passes
  ['0.0.0.0', true, 'unspecified'],
  ['0.1.2.3', true, 'unspecified'],
  ['10.1.2.3', true, 'private'],
  ['100.64.0.1', true, 'carrierGradeNat'],
  ['100.127.255.255', true, 'carrierGradeNat'],
  ['127.0.0.1', true, 'loopback'],
  ['127.255.255.254', true, 'loopback'],
  ['169.254.169.254', true, 'linkLocal'],
  ['172.16.0.1', true, 'private'],
  ['172.31.255.255', true, 'private'],
  ['192.0.0.8', true, 'reserved'],
  ['192.0.2.1', true, 'reserved'],
  ['192.88.99.1', true, 'reserved'],
  ['192.168.1.1', true, 'private'],
  ['198.18.0.1', true, 'reserved'],
  ['198.51.100.7', true, 'reserved'],
  ['203.0.113.9', true, 'reserved'],
  ['224.0.0.1', true, 'multicast'],
  ['240.0.0.1', true, 'reserved'],
  ['255.255.255.255', true, 'broadcast'],
  ['8.8.8.8', false, 'unicast'],
  ['1.1.1.1', false, 'unicast'],
  ['100.128.0.1', false, 'unicast'],
  ['172.32.0.1', false, 'unicast'],
  ['203.0.114.9', false, 'unicast'],
  // IPv4 spellings the resolver accepts as addresses
  ['2130706433', true, 'loopback'],
  ['127.1', true, 'loopback'],
  ['0x7f.0.0.1', true, 'loopback'],
  ['0177.0.0.1', true, 'loopback'],
  // IPv6 outside global unicast
  ['::', true, 'ipv4Compatible'],
  ['::1', true, 'ipv4Compatible'],
  ['fe80::1', true, 'linkLocal'],
  ['fec0::1', true, 'deprecatedSiteLocal'],
  ['fc00::1', true, 'uniqueLocal'],
  ['fd00:ec2::254', true, 'uniqueLocal'],
  ['ff02::1', true, 'multicast'],
  ['100::1', true, 'discard'],
  ['4000::1', true, 'unassigned'],
  // special blocks inside 2000::/3
  ['2001:db8::1', true, 'reserved'],
  ['2001:2::1', true, 'benchmarking'],
  ['2001:20::1', true, 'orchid2'],
  ['3fff::1', true, 'reserved'],
  // global unicast passes
  ['2606:4700:4700::1111', false, 'unicast'],
  ['2a00:1450:4001:82a::200e', false, 'unicast'],
  ['2001:4860:4860::8888', false, 'unicast'],
  // IPv4-compatible (deprecated): refused whatever it carries
  ['::127.0.0.1', true, 'ipv4Compatible'],
  ['::7f00:1', true, 'ipv4Compatible'],
  ['::8.8.8.8', true, 'ipv4Compatible'],
  // IPv4-mapped: judged as the IPv4 address
  ['::ffff:127.0.0.1', true, 'ipv4Mapped(loopback)'],
  ['::ffff:7f00:1', true, 'ipv4Mapped(loopback)'],
  ['0:0:0:0:0:ffff:127.0.0.1', true, 'ipv4Mapped(loopback)'],
  ['::FFFF:A9FE:A9FE', true, 'ipv4Mapped(linkLocal)'],
  ['::ffff:10.0.0.1', true, 'ipv4Mapped(private)'],
  ['::ffff:8.8.8.8', false, 'ipv4Mapped(unicast)'],
  // IPv4-translated (SIIT, RFC 2765/6145)
  ['::ffff:0:127.0.0.1', true, 'ipv4Translated(loopback)'],
  ['::ffff:0:7f00:1', true, 'ipv4Translated(loopback)'],
  ['::ffff:0:a9fe:a9fe', true, 'ipv4Translated(linkLocal)'],
  ['::ffff:0:8.8.8.8', false, 'ipv4Translated(unicast)'],
  // NAT64 well-known prefix: judged as the IPv4 address; local-use prefixes refused
  ['64:ff9b::127.0.0.1', true, 'nat64(loopback)'],
  ['64:ff9b::a9fe:a9fe', true, 'nat64(linkLocal)'],
  ['64:ff9b::808:808', false, 'nat64(unicast)'],
  ['64:ff9b:1::808:808', true, 'nat64Local'],
  ['64:ff9b:1:ffff::1', true, 'nat64Local'],
  // 6to4: the IPv4 address in bits 16-47
  ['2002:7f00:1::', true, 'sixToFour(loopback)'],
  ['2002:a00:1::1', true, 'sixToFour(private)'],
  ['2002:a9fe:a9fe::1', true, 'sixToFour(linkLocal)'],
  ['2002:808:808::1', false, 'sixToFour(unicast)'],
  // Teredo: refused whatever it carries
  ['2001::1', true, 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true, 'teredo'],
  // ISATAP interface identifiers: judged as the IPv4 address
  ['2606:4700::5efe:127.0.0.1', true, 'isatap(loopback)'],
  ['2606:4700::200:5efe:a00:1', true, 'isatap(private)'],
  ['2606:4700::200:5efe:808:808', false, 'isatap(unicast)'],
  // brackets and zone ids
  ['[::1]', true, 'ipv4Compatible'],
  ['[::ffff:0:127.0.0.1]', true, 'ipv4Translated(loopback)'],
  ['[2606:4700:4700::1111]', false, 'unicast'],
  ['fe80::1%eth0', true, 'linkLocal'],
  ['[fe80::1%25eth0]', true, 'linkLocal'],
  ['::ffff:127.0.0.1%lo', true, 'ipv4Mapped(loopback)'],
  ['2606:4700:4700::1111%eth0', false, 'unicast'],
  // not an address
  ['not an address', true, 'invalid'],
  ['1:2:3:4:5:6:7:8:9', true, 'invalid'],
  ['', true, 'invalid'],
  ['[]', true, 'invalid'],
]

describe('judgeAddress', () => {
  for (const [address, blocked, range] of rows) {
    it(`${address || '(empty)'} → ${blocked ? 'blocked' : 'allowed'} (${range})`, () => {
      expect(judgeAddress(address)).toEqual({ blocked, range })
      expect(isBlockedAddress(address)).toBe(blocked)
    })
  }
})

describe('isBlockedHost (a URL host, not resolved)', () => {
  const hosts: [string, boolean][] = [
    ['localhost', true],
    ['LOCALHOST.', true],
    ['api.localhost', true],
    ['127.0.0.1', true],
    ['2130706433', true],
    ['[::1]', true],
    ['[::ffff:0:7f00:1]', true],
    ['[64:ff9b::7f00:1]', true],
    ['[2001::1]', true],
    ['8.8.8.8', false],
    ['[2606:4700:4700::1111]', false],
    // names are left to the socket's lookup
    ['example.com', false],
    ['localhost.example.com', false],
    ['db.internal', false],
  ]
  for (const [host, blocked] of hosts) it(`${host} → ${blocked}`, () => expect(isBlockedHost(host)).toBe(blocked))
})

describe('isLoopbackName', () => {
  for (const [name, loopback] of [
    ['localhost', true],
    ['LOCALHOST.', true],
    ['api.localhost', true],
    ['localhost.example.com', false],
    ['example.com', false],
  ] as const) {
    it(`${name} → ${loopback}`, () => expect(isLoopbackName(name)).toBe(loopback))
  }
})
