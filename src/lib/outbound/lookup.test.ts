import { describe, expect, it } from 'vitest'
import { blockedAddressError, guardedLookup, isBlockedAddressError } from './lookup.js'

describe('guardedLookup', () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ err: unknown; address: unknown }>((resolve) =>
      guardedLookup(host, { all }, (err, address) => resolve({ err, address })),
    )

  it('refuses a name that resolves to loopback, in both callback forms', async () => {
    for (const all of [true, false]) {
      const { err } = await lookup('localhost', all)
      expect(isBlockedAddressError(err), String(err)).toBe(true)
    }
  })

  it('refuses an IPv4-translated loopback address handed to it', async () => {
    const { err } = await lookup('::ffff:0:7f00:1', true)
    expect(isBlockedAddressError(err), String(err)).toBe(true)
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

describe('isBlockedAddressError', () => {
  it('finds the refusal under the causes a client wraps it in', () => {
    const refused = blockedAddressError('address 127.0.0.1')
    expect(isBlockedAddressError(refused)).toBe(true)
    expect(isBlockedAddressError(new Error('pool', { cause: new Error('client', { cause: refused }) }))).toBe(true)
    expect(isBlockedAddressError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(false)
    expect(isBlockedAddressError(null)).toBe(false)
  })
})
