export { isBlockedAddress, isBlockedHost, isLoopbackName, judgeAddress, type AddressVerdict } from './address.js'
export { isOutboundError, OutboundError, type OutboundErrorCode } from './errors.js'
export {
  createOutboundClient,
  outboundDefaults,
  outboundFetch,
  type OutboundClient,
  type OutboundInit,
  type OutboundOptions,
  type OutboundResponse,
  type OutboundSockets,
} from './fetch.js'
export {
  blockedAddressError,
  createGuardedLookup,
  guardedLookup,
  isBlockedAddressError,
  type BlockedAddressError,
  type GuardedLookupOptions,
  type Resolver,
  type SocketLookup,
} from './lookup.js'
export { guardedSocket } from './socket.js'
