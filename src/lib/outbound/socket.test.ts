import { createServer, type AddressInfo, type Server } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isBlockedAddressError } from './lookup.js'
import { guardedSocket } from './socket.js'

let listener: Server
let port: number
let accepted = 0

beforeAll(async () => {
  listener = createServer((socket) => {
    accepted += 1
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  port = (listener.address() as AddressInfo).port
})
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve))
})

/** Connects the way node-postgres does and reports the error the socket fails with. */
function failure(...args: unknown[]): Promise<unknown> {
  return new Promise((resolve) => {
    const socket = guardedSocket()
    socket.once('error', resolve)
    socket.once('connect', () => {
      socket.destroy()
      resolve(null)
    })
    ;(socket.connect as (...a: unknown[]) => unknown)(...args)
  })
}

describe('guardedSocket', () => {
  const refused: [name: string, args: () => unknown[]][] = [
    ['a loopback address', () => [port, '127.0.0.1']],
    ['an IPv4-translated loopback address', () => [port, '::ffff:0:7f00:1']],
    ['an IPv4-mapped loopback address', () => [port, '::ffff:127.0.0.1']],
    ['a name resolving to loopback', () => [port, 'localhost']],
    ['no host (localhost)', () => [port]],
    ['the options form', () => [{ port, host: '127.0.0.1' }]],
    ['a Unix socket path', () => ['/var/run/postgresql/.s.PGSQL.5432']],
    ['a Unix socket in the options form', () => [{ path: '/tmp/.s.PGSQL.5432' }]],
  ]
  for (const [name, args] of refused) {
    it(`refuses ${name} before connecting`, async () => {
      const err = await failure(...args())
      expect(isBlockedAddressError(err), String(err)).toBe(true)
    })
  }

  it('never reached the listener', () => {
    expect(accepted).toBe(0)
  })

  it('resolves names through the resolver: an unknown name fails as the resolver says', async () => {
    const err = await failure(port, 'no-such-host.invalid')
    expect(err).toBeTruthy()
    expect(isBlockedAddressError(err)).toBe(false)
  })
})
