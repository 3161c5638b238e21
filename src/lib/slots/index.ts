export type { SlotClaim, Slots } from './slots.js'
export { createMemorySlots } from './memory-slots.js'
export { createRedisSlots } from './redis-slots.js'
