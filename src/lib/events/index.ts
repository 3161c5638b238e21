export { createEventBus, type EventBus } from './bus.js'
export { principalSnapshot, type PrincipalSnapshot } from './principal-snapshot.js'
export {
  resourcePublisher,
  type ResourceEvent,
  type ResourceEvents,
  type ResourcePublisher,
} from './resource-events.js'
