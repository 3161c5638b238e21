import { isIP, Socket, type SocketConnectOpts } from 'node:net'
import { isBlockedAddress } from './address.js'
import { blockedAddressError, guardedLookup } from './lookup.js'

/**
 * A TCP socket for clients that call `socket.connect(port, host)` themselves (node-postgres takes it as
 * its `stream`). A host name is resolved through guardedLookup and an address literal is checked as
 * it is (sockets do not look those up), so whatever it connects to has passed the outbound policy; a
 * Unix socket path is refused. A refusal fails the socket with PLINTH_BLOCKED_ADDRESS before any
 * packet is sent. TLS layered on top still verifies the host name the client was given.
 */
export function guardedSocket(): Socket {
  const socket = new Socket()
  const connect = socket.connect.bind(socket) as (options: SocketConnectOpts, listener?: () => void) => Socket
  const refuse = (what: string): Socket => {
    process.nextTick(() => socket.destroy(blockedAddressError(what)))
    return socket
  }
  // Replaced on this one instance: the client keeps calling the method it knows.
  socket.connect = ((...args: unknown[]) => {
    const [first, second] = args
    const listener = args.find((a): a is () => void => typeof a === 'function')
    const options = typeof first === 'object' && first !== null ? (first as SocketConnectOpts) : null
    if (options ? 'path' in options : typeof first === 'string' && !/^\d+$/.test(first)) return refuse('a Unix socket')
    const port = options && 'port' in options ? Number(options.port) : Number(first)
    const host = options && 'host' in options ? options.host : typeof second === 'string' ? second : undefined
    const target = host ?? 'localhost'
    if (isIP(target) !== 0 && isBlockedAddress(target)) return refuse(`address ${target}`)
    return connect({ ...(options ?? {}), port, host: target, lookup: guardedLookup }, listener)
  }) as Socket['connect']
  return socket
}
