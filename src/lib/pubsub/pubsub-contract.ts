import { afterEach, describe, expect, it } from 'vitest'
import type { PubSub, PubSubOptions } from './pubsub.js'

export interface PubSubFixture {
  /** Opens one instance, as one Plinth process would. */
  open(options?: PubSubOptions): Promise<PubSub>
  /** True when two opened instances see each other's messages (Redis), false when each is alone (memory). */
  readonly shared: boolean
}

/** Messages a handler received, with a way to wait for the next one. */
function inbox() {
  const messages: string[] = []
  let waiters: Array<() => void> = []
  return {
    messages,
    handler(message: string) {
      messages.push(message)
      for (const wake of waiters) wake()
      waiters = []
    },
    /** Resolves once `count` messages have arrived; fails the test after two seconds. */
    async waitFor(count: number): Promise<string[]> {
      const deadline = Date.now() + 2000
      while (messages.length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`expected ${count} messages, got ${JSON.stringify(messages)}`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      return messages
    },
  }
}

/**
 * The behaviour every PubSub shares. "Nothing arrived" is asserted without sleeping: a later message on
 * the same path is awaited first, and delivery is in publish order.
 */
export function runPubSubContract(name: string, fixture: PubSubFixture): void {
  describe(`PubSub contract: ${name}`, () => {
    const opened: PubSub[] = []
    async function open(options?: PubSubOptions): Promise<PubSub> {
      const pubsub = await fixture.open(options)
      opened.push(pubsub)
      return pubsub
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((p) => p.close()))
    })

    it('says whether other instances hear it', async () => {
      expect((await open()).shared).toBe(fixture.shared)
    })

    it('delivers every message to every subscriber of the channel, in order', async () => {
      const pubsub = await open()
      const a = inbox()
      const b = inbox()
      await pubsub.subscribe('sessions', a.handler)
      await pubsub.subscribe('sessions', b.handler)
      await pubsub.publish('sessions', 'one')
      await pubsub.publish('sessions', 'two')
      expect(await a.waitFor(2)).toEqual(['one', 'two'])
      expect(await b.waitFor(2)).toEqual(['one', 'two'])
    })

    it('never runs a handler inside publish', async () => {
      const pubsub = await open()
      const a = inbox()
      await pubsub.subscribe('c', a.handler)
      const published = pubsub.publish('c', 'x')
      expect(a.messages).toEqual([])
      await published
      expect(await a.waitFor(1)).toEqual(['x'])
    })

    it('with awaitDelivery, answers only once every subscriber, here and in other instances, has run its handlers', async () => {
      const a = await open()
      const b = await open()
      const here = inbox()
      const there = inbox()
      await a.subscribe('invalidate', here.handler)
      await b.subscribe('invalidate', there.handler)
      await a.publish('invalidate', 'user:42', { awaitDelivery: true })
      expect(here.messages).toEqual(['user:42'])
      expect(there.messages).toEqual(fixture.shared ? ['user:42'] : [])
      // The framing of a waited-for message never reaches handlers, and plain messages still flow.
      await a.publish('invalidate', 'plain')
      expect(await here.waitFor(2)).toEqual(['user:42', 'plain'])
    })

    it('with awaitDelivery and no subscriber anywhere, answers at once', async () => {
      const pubsub = await open()
      await pubsub.publish('nobody-listens', 'x', { awaitDelivery: true })
    })

    it('treats the same handler subscribed twice as two subscriptions', async () => {
      const pubsub = await open()
      const a = inbox()
      const first = await pubsub.subscribe('c', a.handler)
      await pubsub.subscribe('c', a.handler)
      await pubsub.publish('c', 'x')
      await a.waitFor(2)
      await first()
      await pubsub.publish('c', 'y')
      expect(await a.waitFor(3)).toEqual(['x', 'x', 'y'])
    })

    it('stops delivery once unsubscribed, leaving other subscribers alone', async () => {
      const pubsub = await open()
      const gone = inbox()
      const stays = inbox()
      const unsubscribe = await pubsub.subscribe('c', gone.handler)
      await pubsub.subscribe('c', stays.handler)
      await pubsub.publish('c', 'before')
      await gone.waitFor(1)
      await unsubscribe()
      await unsubscribe() // idempotent
      await pubsub.publish('c', 'after')
      expect(await stays.waitFor(2)).toEqual(['before', 'after'])
      expect(gone.messages).toEqual(['before'])
    })

    it('resubscribes to a channel whose last subscriber left', async () => {
      const pubsub = await open()
      const a = inbox()
      const unsubscribe = await pubsub.subscribe('c', a.handler)
      await unsubscribe()
      await pubsub.subscribe('c', a.handler)
      await pubsub.publish('c', 'x')
      expect(await a.waitFor(1)).toEqual(['x'])
    })

    it('keeps channels apart', async () => {
      const pubsub = await open()
      const a = inbox()
      const b = inbox()
      await pubsub.subscribe('a', a.handler)
      await pubsub.subscribe('b', b.handler)
      await pubsub.publish('b', 'for b')
      await pubsub.publish('a', 'for a')
      await pubsub.publish('nobody', 'lost')
      await pubsub.publish('b', 'last')
      expect(await b.waitFor(2)).toEqual(['for b', 'last'])
      expect(a.messages).toEqual(['for a'])
    })

    it('reports a throwing handler and still delivers to the others', async () => {
      const errors: unknown[] = []
      const pubsub = await open({ onError: (err) => errors.push(err) })
      const a = inbox()
      await pubsub.subscribe('c', () => {
        throw new Error('handler failed')
      })
      await pubsub.subscribe('c', a.handler)
      await pubsub.publish('c', 'x')
      await pubsub.publish('c', 'y')
      expect(await a.waitFor(2)).toEqual(['x', 'y'])
      expect(errors).toHaveLength(2)
      expect(errors[0]).toMatchObject({ message: 'handler failed' })
    })

    it(fixture.shared ? 'delivers between instances' : 'keeps instances apart', async () => {
      const one = await open()
      const two = await open()
      const onOne = inbox()
      const onTwo = inbox()
      await one.subscribe('c', onOne.handler)
      await two.subscribe('c', onTwo.handler)
      await one.publish('c', 'from one')
      await two.publish('c', 'from two')
      if (fixture.shared) {
        expect(await onOne.waitFor(2)).toEqual(['from one', 'from two'])
        expect(await onTwo.waitFor(2)).toEqual(['from one', 'from two'])
      } else {
        expect(await onOne.waitFor(1)).toEqual(['from one'])
        expect(await onTwo.waitFor(1)).toEqual(['from two'])
        await one.publish('c', 'again')
        await onOne.waitFor(2)
        expect(onTwo.messages).toEqual(['from two'])
      }
    })

    it('closes cleanly: idempotent, refuses further use, stops delivery', async () => {
      const pubsub = await open()
      const other = await open()
      const a = inbox()
      const b = inbox()
      const unsubscribe = await pubsub.subscribe('c', a.handler)
      await other.subscribe('c', b.handler)
      await pubsub.close()
      await pubsub.close()
      await unsubscribe() // after close: a no-op, not an error
      await expect(pubsub.publish('c', 'x')).rejects.toThrow(/closed/)
      await expect(pubsub.subscribe('c', () => {})).rejects.toThrow(/closed/)
      await other.publish('c', 'after close')
      await b.waitFor(1)
      expect(a.messages).toEqual([])
    })
  })
}
