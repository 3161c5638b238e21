import { randomUUID } from 'node:crypto'
import { createMemorySlots } from './memory-slots.js'
import { createRedisSlots } from './redis-slots.js'
import { runSlotsContract } from './slots-contract.js'

runSlotsContract('memory', { shared: false, open: async () => createMemorySlots() })

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  const prefix = `plinth-test:${randomUUID()}:`
  runSlotsContract('redis', { shared: true, open: () => createRedisSlots(redisUrl, prefix) })
}
