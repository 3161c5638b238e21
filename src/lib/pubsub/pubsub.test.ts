import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
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

if (redisUrl) {
  describe('Redis PubSub: waiting for delivery', () => {
    const prefix = `plinth-test:${randomUUID()}:`
    // A receiver speaking the wire protocol by hand, so it can be slow or silent on purpose.
    async function rawReceiver(
      channel: string,
      onMessage: (replyTo: string, n: string, raw: Redis) => void,
    ): Promise<Redis[]> {
      const sub = new Redis(redisUrl!)
      const pub = new Redis(redisUrl!)
      sub.on('message', (_: string, message: string) => {
        const [, replyTo, n] = message.split('\u0001')
        onMessage(replyTo!, n!, pub)
      })
      await sub.subscribe(prefix + channel)
      return [sub, pub]
    }

    it('waits for a slow instance to confirm', async () => {
      let confirmed = false
      const clients = await rawReceiver('slow', (replyTo, n, pub) => {
        setTimeout(() => {
          confirmed = true
          void pub.publish(replyTo, n)
        }, 100)
      })
      const pubsub = await createRedisPubSub(redisUrl!, prefix)
      try {
        await pubsub.publish('slow', 'hash:abc', { awaitDelivery: true })
        expect(confirmed).toBe(true)
      } finally {
        await pubsub.close()
        clients.forEach((c) => c.disconnect())
      }
    })

    it('stops waiting for an instance that never confirms, and says so', async () => {
      const clients = await rawReceiver('silent', () => {})
      const errors: unknown[] = []
      const pubsub = await createRedisPubSub(redisUrl!, prefix, {
        deliveryTimeoutMs: 100,
        onError: (err) => errors.push(err),
      })
      try {
        await pubsub.publish('silent', 'hash:abc', { awaitDelivery: true })
        expect(String(errors[0])).toMatch(/1 receiver\(s\) of .*silent did not confirm within 100 ms/)
      } finally {
        await pubsub.close()
        clients.forEach((c) => c.disconnect())
      }
    })
  })
}
