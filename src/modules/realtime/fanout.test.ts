import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../lib/clock-manual.js'
import { compareValue, literal, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Principal } from '../../lib/principal.js'
import { testPrincipal } from '../../../test/support/principals.js'
import type { Opened } from '../records/index.js'
import { createFanout } from './fanout.js'
import type { Frame } from './frame.js'
import type { PublishedEvent } from './hub.js'
import type { Sink } from './sink.js'
import type { StreamCaller, Subscription } from './subscription.js'

// The fan-out's own rules, with fake sinks: which streams share a frame, how often a caller is checked,
// and that a large fan-out lets other work run between its batches. What a subscriber sees end to end is
// in test/api/realtime.test.ts and test/api/realtime-fanout.test.ts.

const shape = { collection: { ownerScoped: false }, stored: [{ name: 'title' }, { name: 'secret' }, { name: 'owner' }] }
/** Just what delivery reads of an opened collection; `fields` is the allowlist, `rows` the resolved row filter. */
const openedWith = (fields: string[] | null, rows: ResolvedFilterNode | null = null) =>
  ({
    collection: { projectId: 'p1', name: 'tasks' },
    shape,
    locale: 'en',
    scope: { allowed: true, rows, fields, admin: false },
  }) as unknown as Opened

/** The system columns an event's record lacks, as presentRecord fills them in. */
const nulls = { created_at: null, updated_at: null, created_by: null, updated_by: null, _version: null }

const ownRows = (userId: string) => compareValue(['owner'], 'eq', literal(userId))

function fakeSink() {
  const frames: Frame[] = []
  const listeners: (() => void)[] = []
  const sink: Sink = {
    send: (frame) => void frames.push(frame),
    close: () => listeners.splice(0).forEach((l) => l()),
    drop: () => listeners.splice(0).forEach((l) => l()),
    onClose: (listener) => void listeners.push(listener),
  }
  return { sink, frames }
}

interface Person {
  caller: StreamCaller
  refreshes: number
}
function person(name: string, key: string = name): Person {
  const principal: Principal = testPrincipal({ roleName: name })
  const p: Person = {
    refreshes: 0,
    caller: { principal, key, document: null, expiresAt: null, refresh: async () => (p.refreshes++, principal) },
  }
  return p
}

const subscription = (caller: StreamCaller): Subscription => ({
  projectId: 'p1',
  collection: 'tasks',
  view: { filter: null, ids: null },
  viewKey: 'all',
  filterFields: new Set(),
  caller,
})

const record = { id: 'r1', deleted_at: null, title: 'T', secret: 'S', owner: 'u1' }
const created: PublishedEvent = {
  id: 'e1',
  type: 'record.create',
  projectId: 'p1',
  collection: 'tasks',
  before: null,
  after: record,
  at: 1,
}

/** A fan-out whose `open` answers each person's scope from `scopes`, fed by hand through `publish`. */
function setUp(scopes: Map<Principal, Opened>, batchSize?: number) {
  let publish: (event: PublishedEvent) => void = () => {}
  const fanout = createFanout({
    open: async (principal) => scopes.get(principal)!,
    clock: createManualClock(),
    reasonOf: () => ({ error: 'internal', message: 'x' }),
    maxPending: 10,
    batchSize,
  })
  const attach = (who: Person) => {
    const out = fakeSink()
    fanout.add(subscription(who.caller), out.sink, (onEvent) => {
      publish = onEvent
      return () => {}
    })
    return out
  }
  return { attach, publish: (event: PublishedEvent) => publish(event) }
}

const settle = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setImmediate(resolve))
}

describe('fan-out: visibility classes', () => {
  it('streams with the same scope share one frame; a narrower allowlist or another row filter gets its own', async () => {
    const [ann, bob, narrow, own1, own2] = ['ann', 'bob', 'narrow', 'own1', 'own2'].map((n) => person(n))
    const scopes = new Map<Principal, Opened>([
      [ann!.caller.principal, openedWith(null)],
      [bob!.caller.principal, openedWith(null)],
      [narrow!.caller.principal, openedWith(['title'])],
      // One role whose row filter names $CURRENT_USER, resolved for two people: two classes.
      [own1!.caller.principal, openedWith(null, ownRows('u1'))],
      [own2!.caller.principal, openedWith(null, ownRows('u2'))],
    ])
    const { attach, publish } = setUp(scopes)
    const [a, b, n, o1, o2] = [ann, bob, narrow, own1, own2].map((p) => attach(p!))
    publish(created)
    await settle(() => a!.frames.length + b!.frames.length + n!.frames.length + o1!.frames.length === 4)

    expect(a!.frames[0]).toBe(b!.frames[0]) // one frame, serialised once, for both
    expect(JSON.parse(a!.frames[0]!.text()).record).toEqual({ ...record, ...nulls })
    expect(n!.frames[0]).not.toBe(a!.frames[0])
    expect(JSON.parse(n!.frames[0]!.text()).record).toEqual({ id: 'r1', deleted_at: null, title: 'T', ...nulls })
    expect(o1!.frames[0]).not.toBe(a!.frames[0])
    expect(JSON.parse(o1!.frames[0]!.text()).record).toEqual({ ...record, ...nulls })
    expect(o2!.frames).toEqual([]) // u2's row filter does not reach u1's record
  })

  it('resolves a caller once per event, whatever the number of its streams', async () => {
    const ann = person('ann')
    const { attach, publish } = setUp(new Map([[ann.caller.principal, openedWith(null)]]))
    const streams = Array.from({ length: 5 }, () => attach(ann))
    publish(created)
    publish({ ...created, id: 'e2' })
    await settle(() => streams.every((s) => s.frames.length === 2))
    expect(ann.refreshes).toBe(2)
  })

  it('a stream that joins while an event waits for its fan-out does not receive it (it came before)', async () => {
    const ann = person('ann')
    const { attach, publish } = setUp(new Map([[ann.caller.principal, openedWith(null)]]))
    const early = attach(ann)
    publish(created) // under way
    publish({ ...created, id: 'e2' }) // waiting behind it
    const late = attach(ann)
    publish({ ...created, id: 'e3' })
    await settle(() => early.frames.length === 3 && late.frames.length >= 1)
    expect(late.frames.map((f) => f.id)).toEqual(['e3'])
  })

  it('lets other work run between batches: what was queued during the first batch runs before the last frame', async () => {
    const ann = person('ann')
    const { attach, publish } = setUp(new Map([[ann.caller.principal, openedWith(null)]]), 2)
    const streams = Array.from({ length: 6 }, () => attach(ann))
    let framesWhenOtherWorkRan = -1
    const count = () => streams.reduce((n, s) => n + s.frames.length, 0)
    // "Other work" (a request's answer, another socket) is queued as soon as the first frame is written.
    const first = streams[0]!.sink.send
    streams[0]!.sink.send = (frame) => {
      first(frame)
      setImmediate(() => (framesWhenOtherWorkRan = count()))
    }
    publish(created)
    // Nothing is written in the turn that published the event (the request that caused it answers first).
    await Promise.resolve()
    expect(count()).toBe(0)
    await settle(() => count() === 6)
    expect(framesWhenOtherWorkRan).toBeGreaterThan(0)
    expect(framesWhenOtherWorkRan).toBeLessThan(6)
  })
})
