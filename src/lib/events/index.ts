export { createEventBus, type EventBus } from './bus.js'
