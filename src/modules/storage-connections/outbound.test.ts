import { describe, expect, it } from 'vitest'
import { guardedLookup, isBlockedAddress, isBlockedAddressError, isLoopbackName } from './outbound.js'

describe('isBlockedAddress', () => {
  const rows: [address: string, blocked: boolean][] = [
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.128.0.1', false],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['198.18.0.1', true],
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['104.18.2.3', false],
    ['::', true],
    ['::1', true],
    ['[::1]', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fc00::1', true],
    ['fd00:ec2::254', true],
    ['ff02::1', true],
    ['2001:db8::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::808:808', false],
    ['2002:7f00:1::', true],
    ['2002:808:808::', false],
    ['2606:4700:4700::1111', false],
    ['2a00:1450:4001:82a::200e', false],
    ['not an address', true],
    ['1:2:3:4:5:6:7:8:9', true],
  ]
  for (const [address, blocked] of rows) {
    it(`${address} → ${blocked ? 'blocked' : 'allowed'}`, () => expect(isBlockedAddress(address)).toBe(blocked))
  }
})

describe('isLoopbackName', () => {
  for (const [name, loopback] of [['localhost', true], ['LOCALHOST.', true], ['api.localhost', true], ['localhost.example.com', false], ['example.com', false]] as const) {
    it(`${name} → ${loopback}`, () => expect(isLoopbackName(name)).toBe(loopback))
  }
})

describe('guardedLookup', () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ err: unknown; address: unknown }>((resolve) => guardedLookup(host, { all }, (err, address) => resolve({ err, address })))

  it('refuses a name that resolves to loopback, in both callback forms', async () => {
    for (const all of [true, false]) {
      const { err } = await lookup('localhost', all)
      expect(isBlockedAddressError(err), String(err)).toBe(true)
    }
  })

  it('passes a public address through, in both callback forms', async () => {
    expect(await lookup('8.8.8.8', false)).toEqual({ err: null, address: '8.8.8.8' })
    expect(await lookup('8.8.8.8', true)).toEqual({ err: null, address: [{ address: '8.8.8.8', family: 4 }] })
  })

  it('passes resolver errors through unchanged', async () => {
    const { err } = await lookup('no-such-host.invalid', true)
    expect(err).toBeTruthy()
    expect(isBlockedAddressError(err)).toBe(false)
  })
})
