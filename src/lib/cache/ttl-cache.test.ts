import { describe, expect, it } from 'vitest'
import type { TimeSource } from '../clock.js'
import { createTtlCache, type TtlCache } from './ttl-cache.js'

type Step =
  | { op: 'set'; key: string; value: number }
  | { op: 'get'; key: string; expect: number | undefined }
  | { op: 'delete'; key: string; expect: boolean }
  | { op: 'deleteWhere'; below: number; expect: number }
  | { op: 'advance'; ms: number }
  | { op: 'clear' }
  | { op: 'size'; expect: number }

interface Scenario {
  name: string
  maxEntries?: number
  ttlMs?: number
  steps: Step[]
}

const set = (key: string, value: number): Step => ({ op: 'set', key, value })
const get = (key: string, value: number | undefined): Step => ({ op: 'get', key, expect: value })
const advance = (ms: number): Step => ({ op: 'advance', ms })
const size = (n: number): Step => ({ op: 'size', expect: n })

const scenarios: Scenario[] = [
  { name: 'returns what was set', steps: [set('a', 1), get('a', 1), get('b', undefined), size(1)] },
  { name: 'overwrites a key', steps: [set('a', 1), set('a', 2), get('a', 2), size(1)] },
  { name: 'keeps an entry until just before its TTL', ttlMs: 1000, steps: [set('a', 1), advance(999), get('a', 1)] },
  {
    name: 'expires an entry at its TTL',
    ttlMs: 1000,
    steps: [set('a', 1), advance(1000), get('a', undefined), size(0)],
  },
  {
    name: 'does not extend the TTL on read',
    ttlMs: 1000,
    steps: [set('a', 1), advance(600), get('a', 1), advance(400), get('a', undefined)],
  },
  {
    name: 'renews the TTL on set',
    ttlMs: 1000,
    steps: [set('a', 1), advance(600), set('a', 2), advance(600), get('a', 2)],
  },
  {
    name: 'counts only live entries',
    ttlMs: 1000,
    steps: [set('a', 1), advance(500), set('b', 2), advance(500), size(1), get('b', 2)],
  },
  {
    name: 'evicts the least recently set entry when full',
    maxEntries: 2,
    steps: [set('a', 1), set('b', 2), set('c', 3), get('a', undefined), get('b', 2), get('c', 3), size(2)],
  },
  {
    name: 'counts a read as use when choosing whom to evict',
    maxEntries: 2,
    steps: [set('a', 1), set('b', 2), get('a', 1), set('c', 3), get('b', undefined), get('a', 1), get('c', 3)],
  },
  {
    name: 'counts an overwrite as use when choosing whom to evict',
    maxEntries: 2,
    steps: [set('a', 1), set('b', 2), set('a', 10), set('c', 3), get('b', undefined), get('a', 10)],
  },
  {
    name: 'drops expired entries before evicting a live one',
    maxEntries: 2,
    ttlMs: 1000,
    // "a" was read last, so it is the most recently used, but it has expired: "b" must survive.
    steps: [
      set('a', 1),
      advance(500),
      set('b', 2),
      advance(400),
      get('a', 1),
      advance(200),
      set('c', 3),
      get('b', 2),
      get('c', 3),
    ],
  },
  {
    name: 'deletes one entry',
    steps: [set('a', 1), set('b', 2), { op: 'delete', key: 'a', expect: true }, get('a', undefined), get('b', 2)],
  },
  { name: 'deleting a missing key is false', steps: [{ op: 'delete', key: 'a', expect: false }] },
  {
    name: 'deleting an expired key is false',
    ttlMs: 1000,
    steps: [set('a', 1), advance(1000), { op: 'delete', key: 'a', expect: false }],
  },
  {
    name: 'deleteWhere removes what the predicate picks and counts it',
    steps: [
      set('a', 1),
      set('b', 5),
      set('c', 2),
      { op: 'deleteWhere', below: 3, expect: 2 },
      get('a', undefined),
      get('c', undefined),
      get('b', 5),
    ],
  },
  {
    name: 'deleteWhere does not count expired entries',
    ttlMs: 1000,
    steps: [set('a', 1), advance(600), set('b', 2), advance(400), { op: 'deleteWhere', below: 3, expect: 1 }, size(0)],
  },
  { name: 'clear empties the cache', steps: [set('a', 1), set('b', 2), { op: 'clear' }, size(0), get('a', undefined)] },
]

describe('ttl cache', () => {
  it.each(scenarios)('$name', ({ maxEntries = 100, ttlMs = 60_000, steps }) => {
    let now = 1_700_000_000_000
    const clock: TimeSource = { now: () => now, seconds: () => Math.floor(now / 1000) }
    const cache = createTtlCache<number>({ maxEntries, ttlMs, clock })
    steps.forEach((step, i) => {
      const at = `step ${i} (${JSON.stringify(step)})`
      switch (step.op) {
        case 'set':
          return cache.set(step.key, step.value)
        case 'get':
          return expect(cache.get(step.key), at).toBe(step.expect)
        case 'delete':
          return expect(cache.delete(step.key), at).toBe(step.expect)
        case 'deleteWhere':
          return expect(
            cache.deleteWhere((_key, value) => value < step.below),
            at,
          ).toBe(step.expect)
        case 'advance':
          now += step.ms
          return
        case 'clear':
          return cache.clear()
        case 'size':
          return expect(cache.size, at).toBe(step.expect)
      }
    })
  })

  it('passes keys and values to the deleteWhere predicate', () => {
    const clock: TimeSource = { now: () => 0, seconds: () => 0 }
    const cache = createTtlCache<{ userId: string }>({ maxEntries: 10, ttlMs: 1000, clock })
    cache.set('token-1', { userId: 'u1' })
    cache.set('token-2', { userId: 'u2' })
    cache.set('token-3', { userId: 'u1' })
    expect(cache.deleteWhere((_key, session) => session.userId === 'u1')).toBe(2)
    expect(cache.deleteWhere((key) => key === 'token-2')).toBe(1)
    expect(cache.size).toBe(0)
  })

  it.each([
    { maxEntries: 0, ttlMs: 1000 },
    { maxEntries: 1.5, ttlMs: 1000 },
    { maxEntries: 10, ttlMs: 0 },
    { maxEntries: 10, ttlMs: Number.NaN },
  ])('refuses maxEntries $maxEntries with ttlMs $ttlMs', (options) => {
    const clock: TimeSource = { now: () => 0, seconds: () => 0 }
    expect(() => createTtlCache({ ...options, clock })).toThrow(RangeError)
  })
})

describe('ttl cache getOrLoad', () => {
  const clock: TimeSource = { now: () => 0, seconds: () => 0 }
  const make = () => createTtlCache<string>({ maxEntries: 10, ttlMs: 60_000, clock })

  /** A load held after its reads, until the test lets it return: where an invalidation can land. */
  function heldLoad(value: string | null) {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    return {
      load: async () => {
        calls++
        await released
        return value
      },
      release: () => release(),
      get calls() {
        return calls
      },
    }
  }

  it('caches what a load returns, and a hit loads nothing', async () => {
    const cache = make()
    let calls = 0
    const load = async () => `v${++calls}`
    expect(await cache.getOrLoad('a', load)).toBe('v1')
    expect(await cache.getOrLoad('a', load)).toBe('v1')
    expect(calls).toBe(1)
    expect(cache.get('a')).toBe('v1')
  })

  it('neither caches nor remembers a null result', async () => {
    const cache = make()
    expect(await cache.getOrLoad('a', async () => null)).toBeNull()
    expect(cache.get('a')).toBeUndefined()
    expect(await cache.getOrLoad('a', async () => 'found')).toBe('found')
  })

  it('passes a rejection through and caches nothing', async () => {
    const cache = make()
    await expect(cache.getOrLoad('a', async () => Promise.reject(new Error('db down')))).rejects.toThrow('db down')
    expect(cache.size).toBe(0)
  })

  // The race of issue 12 item 17: the load has read the row, the row is deleted and the invalidation
  // delivered (finding nothing to drop), then the load would cache what it read.
  it.each([
    { name: 'delete of the loading key (nothing cached yet)', invalidate: (c: TtlCache<string>) => c.delete('a') },
    { name: 'delete of another key', invalidate: (c: TtlCache<string>) => c.delete('b') },
    { name: 'deleteWhere', invalidate: (c: TtlCache<string>) => c.deleteWhere((_key, value) => value === 'stale') },
    { name: 'clear', invalidate: (c: TtlCache<string>) => c.clear() },
  ])('an invalidation ($name) between load start and insert leaves nothing cached', async ({ invalidate }) => {
    const cache = make()
    const held = heldLoad('stale')
    const loading = cache.getOrLoad('a', held.load)
    expect(held.calls).toBe(1)
    invalidate(cache)
    held.release()
    // The overlapping caller still gets what it read; nobody after it does.
    expect(await loading).toBe('stale')
    expect(cache.get('a')).toBeUndefined()
    expect(await cache.getOrLoad('a', async () => null)).toBeNull()
  })

  it('an invalidation before the load started does not keep its result out', async () => {
    const cache = make()
    cache.delete('a')
    expect(await cache.getOrLoad('a', async () => 'fresh')).toBe('fresh')
    expect(cache.get('a')).toBe('fresh')
  })

  it('an invalidation after the insert removes the entry as usual', async () => {
    const cache = make()
    await cache.getOrLoad('a', async () => 'v')
    expect(cache.delete('a')).toBe(true)
    expect(cache.get('a')).toBeUndefined()
  })

  it('a later load caches again once the overlapping one is done', async () => {
    const cache = make()
    const held = heldLoad('old')
    const loading = cache.getOrLoad('a', held.load)
    cache.delete('a')
    held.release()
    await loading
    expect(await cache.getOrLoad('a', async () => 'new')).toBe('new')
    expect(cache.get('a')).toBe('new')
  })

  it('counts the TTL from the start of the load', async () => {
    let now = 0
    const timed = createTtlCache<string>({
      maxEntries: 10,
      ttlMs: 1000,
      clock: { now: () => now, seconds: () => Math.floor(now / 1000) },
    })
    await timed.getOrLoad('a', async () => {
      now += 400 // a slow read
      return 'v'
    })
    now += 599
    expect(timed.get('a')).toBe('v')
    now += 1
    expect(timed.get('a')).toBeUndefined()
  })
})
