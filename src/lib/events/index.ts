export { createEventBus, type EventBus } from './bus.js'
export { principalSnapshot, type PrincipalSnapshot } from './principal-snapshot.js'
