export type { MessageHandler, PublishOptions, PubSub, PubSubOptions, Unsubscribe } from './pubsub.js'
export { createMemoryPubSub } from './memory-pubsub.js'
export { createRedisPubSub } from './redis-pubsub.js'
