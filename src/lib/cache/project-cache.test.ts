import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryPubSub, createRedisPubSub, type PubSub } from '../pubsub/index.js'
import { createProjectCache, type ProjectCache } from './project-cache.js'

interface Fixture {
  /** Two pub/subs as two Plinth instances would hold them: one shared in process (memory), two connections (Redis). */
  openPair(): Promise<[PubSub, PubSub]>
}

/**
 * A store of one value per project, read the way the services read: the value is taken when the load starts,
 * and the load may then be held (as if still reading) or made to fail before it returns.
 */
function fakeStore() {
  const values = new Map<string, string>()
  const loads: string[] = []
  let hold: Promise<void> | null = null
  let failNext: Error | null = null
  return {
    values,
    /** Projects loaded, in order. */
    loads,
    async load(projectId: string): Promise<string> {
      loads.push(projectId)
      const read = values.get(projectId) ?? 'none'
      const failure = failNext
      failNext = null
      const held = hold
      if (held) await held
      if (failure) throw failure
      return read
    },
    /** Holds every load started from now on until the returned function is called. */
    holdLoads(): () => void {
      let release!: () => void
      hold = new Promise<void>((resolve) => (release = resolve))
      return () => {
        hold = null
        release()
      }
    },
    failNextLoad(err: Error): void {
      failNext = err
    },
  }
}

/** The pub/sub seen through a counter of live subscriptions and of the messages their handlers received. */
function tracked(pubsub: PubSub) {
  const stats = { subscriptions: 0, received: [] as string[] }
  const wrapped: PubSub = {
    shared: pubsub.shared,
    publish: (channel, message, options) => pubsub.publish(channel, message, options),
    async subscribe(channel, handler) {
      const unsubscribe = await pubsub.subscribe(channel, (message) => {
        stats.received.push(message)
        handler(message)
      })
      stats.subscriptions++
      let done = false
      return async () => {
        if (!done) stats.subscriptions--
        done = true
        await unsubscribe()
      }
    },
    close: () => pubsub.close(),
  }
  return { pubsub: wrapped, stats }
}

function runProjectCacheContract(name: string, fixture: Fixture): void {
  describe(`project cache: ${name}`, () => {
    const toClose: Array<{ close(): Promise<void> }> = []
    afterEach(async () => {
      for (const item of toClose.splice(0).reverse()) await item.close()
    })

    /** Two instances of one cache (one channel, one store), each on its own pub/sub of the pair. */
    async function twoInstances() {
      const [first, second] = await fixture.openPair()
      toClose.push(first, ...(second === first ? [] : [second]))
      const store = fakeStore()
      const channel = `test.${randomUUID()}`
      const a = tracked(first)
      const b = tracked(second)
      const one = await createProjectCache({ pubsub: a.pubsub, channel, load: (id) => store.load(id) })
      const two = await createProjectCache({ pubsub: b.pubsub, channel, load: (id) => store.load(id) })
      toClose.push(one, two)
      return { store, one, two, oneStats: a.stats }
    }

    it('loads a project once and serves every caller from it, concurrent ones included', async () => {
      const { store, one } = await twoInstances()
      store.values.set('p1', 'v1')
      store.values.set('p2', 'w1')
      expect(await Promise.all([one.get('p1'), one.get('p1')])).toEqual(['v1', 'v1'])
      expect(await one.get('p1')).toBe('v1')
      expect(await one.get('p2')).toBe('w1')
      expect(store.loads).toEqual(['p1', 'p2'])
    })

    it('an invalidation on one instance drops the entry on both before it resolves, and only that project', async () => {
      const { store, one, two } = await twoInstances()
      store.values.set('p1', 'v1')
      store.values.set('p2', 'w1')
      await one.get('p1')
      await two.get('p1')
      await two.get('p2')
      store.values.set('p1', 'v2')
      store.values.set('p2', 'w2')
      await one.invalidate('p1')
      // No waiting: the publish resolved, so the other instance has already dropped its copy.
      expect(await two.get('p1')).toBe('v2')
      expect(await one.get('p1')).toBe('v2')
      expect(await two.get('p2')).toBe('w1')
      expect(store.loads).toEqual(['p1', 'p1', 'p2', 'p1', 'p1'])
    })

    it.each([
      { from: 'the same instance', pick: (c: { one: ProjectCache<string> }) => c.one },
      { from: 'the other instance', pick: (c: { two: ProjectCache<string> }) => c.two },
    ])('a load in flight when an invalidation from $from lands does not serve the next caller', async ({ pick }) => {
      const instances = await twoInstances()
      const { store, one } = instances
      store.values.set('p1', 'before')
      const release = store.holdLoads()
      // The load has read "before" and is still running when the change is written and invalidated.
      const overlapping = one.get('p1')
      const waitingOnIt = one.get('p1')
      store.values.set('p1', 'after')
      await pick(instances).invalidate('p1')
      release()
      // The callers that overlapped the change answer with what was read; nobody after them does.
      expect(await overlapping).toBe('before')
      expect(await waitingOnIt).toBe('before')
      expect(await one.get('p1')).toBe('after')
      expect(store.loads).toEqual(['p1', 'p1'])
    })

    it('a rejected load reaches its callers and is retried by the next caller', async () => {
      const { store, one } = await twoInstances()
      store.values.set('p1', 'v1')
      store.failNextLoad(new Error('db down'))
      const first = one.get('p1')
      const second = one.get('p1')
      await expect(first).rejects.toThrow('db down')
      await expect(second).rejects.toThrow('db down')
      expect(await one.get('p1')).toBe('v1')
      expect(await one.get('p1')).toBe('v1')
      expect(store.loads).toEqual(['p1', 'p1'])
    })

    it('a load that rejects after an invalidation replaced it leaves the newer entry cached', async () => {
      const { store, one, two } = await twoInstances()
      store.values.set('p1', 'v1')
      store.failNextLoad(new Error('db down'))
      const release = store.holdLoads()
      const failing = one.get('p1')
      store.values.set('p1', 'v2')
      await two.invalidate('p1')
      release()
      // A new load starts after the invalidation and is cached; then the old one fails.
      expect(await one.get('p1')).toBe('v2')
      await expect(failing).rejects.toThrow('db down')
      expect(await one.get('p1')).toBe('v2')
      expect(store.loads).toEqual(['p1', 'p1'])
    })

    it('close() unsubscribes and keeps nothing from then on; the other instance carries on', async () => {
      const { store, one, two, oneStats } = await twoInstances()
      store.values.set('p1', 'v1')
      await one.get('p1')
      await two.get('p1')
      expect(oneStats.subscriptions).toBe(1)
      await one.close()
      await one.close() // idempotent
      expect(oneStats.subscriptions).toBe(0)
      const heard = oneStats.received.length
      store.values.set('p1', 'v2')
      await two.invalidate('p1')
      // The publish awaited every subscriber: a closed instance still subscribed would have heard it by now.
      expect(oneStats.received.length).toBe(heard)
      // A closed cache would never hear of a change, so it reads each time rather than keep a copy.
      expect(await one.get('p1')).toBe('v2')
      expect(await one.get('p1')).toBe('v2')
      expect(await two.get('p1')).toBe('v2')
      expect(store.loads).toEqual(['p1', 'p1', 'p1', 'p1', 'p1'])
    })
  })
}

runProjectCacheContract('memory', {
  async openPair() {
    const pubsub = createMemoryPubSub()
    return [pubsub, pubsub]
  },
})

// Set means "run against this Redis": an unreachable server fails every test rather than skipping them.
const redisUrl = process.env.TEST_REDIS_URL
if (redisUrl) {
  // One prefix per file run, so concurrent runs on the same Redis never hear each other.
  const prefix = `plinth-test:${randomUUID()}:`
  runProjectCacheContract('redis', {
    async openPair() {
      const first = await createRedisPubSub(redisUrl, prefix)
      try {
        return [first, await createRedisPubSub(redisUrl, prefix)]
      } catch (err) {
        await first.close()
        throw err
      }
    },
  })
}
