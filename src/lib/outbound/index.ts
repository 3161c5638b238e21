export { isBlockedAddress, isBlockedHost, isLoopbackName, judgeAddress, type AddressVerdict } from './address.js'
export { blockedAddressError, guardedLookup, isBlockedAddressError, type BlockedAddressError } from './lookup.js'
export { guardedSocket } from './socket.js'
