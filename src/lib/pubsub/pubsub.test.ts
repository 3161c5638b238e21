import { randomUUID } from 'node:crypto'
import { createMemoryPubSub } from './memory-pubsub.js'
import { runPubSubContract } from './pubsub-contract.js'
import { createRedisPubSub } from './redis-pubsub.js'

runPubSubContract('memory', { shared: false, open: async (options) => createMemoryPubSub(options) })

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  // One prefix per file run, so concurrent runs on the same Redis never hear each other.
  const prefix = `plinth-test:${randomUUID()}:`
  runPubSubContract('redis', { shared: true, open: (options) => createRedisPubSub(redisUrl, prefix, options) })
}
