import { afterEach, describe, expect, it } from 'vitest'
import { createManualClock } from '../../lib/clock-manual.js'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { createEventBus } from '../../lib/events/index.js'
import { createLogger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import { testPrincipal } from '../../../test/support/principals.js'
import { createMemoryPubSub } from '../../lib/pubsub/index.js'
import type { Opened, Opener, RecordEvents } from '../records/index.js'
import type { StreamMessage } from './delivery.js'
import { createRealtime, parseIds, type Realtime, type StreamCaller } from './service.js'
import type { CloseReason, Sink } from './sink.js'

// The stream rules that need a held clock or a stalled permission check; what a subscriber sees is tested
// over HTTP in test/api/realtime.test.ts.

const principal: Principal = testPrincipal({ roleName: 'editor' })

/** Just what delivery reads of an opened collection: no row filter, no allowlist, no stored fields. */
const opened = {
  principal,
  collection: { projectId: 'p1', name: 'tasks' },
  shape: { collection: { ownerScoped: false }, stored: [] },
  locale: 'en',
  scope: { allowed: true, rows: null, fields: null, admin: false },
} as unknown as Opened

function fakeSink() {
  const sent: { message: StreamMessage; id: string }[] = []
  const closes: (CloseReason | null)[] = []
  let dropped = false
  const listeners: (() => void)[] = []
  let closed = false
  const fire = () => {
    if (closed) return
    closed = true
    listeners.splice(0).forEach((l) => l())
  }
  const sink: Sink = {
    send: (frame) => void sent.push({ message: frame.message as StreamMessage, id: frame.id }),
    close: (reason) => {
      closes.push(reason)
      fire()
    },
    drop: () => {
      dropped = true
      fire()
    },
    onClose: (listener) => void (closed ? listener() : listeners.push(listener)),
  }
  return { sink, sent, closes, isDropped: () => dropped, isClosed: () => closed }
}

const settle = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setImmediate(resolve))
}

let seconds = 1000
// Time is read from `seconds`; timers wait on a manual clock never advanced, so an expiry timer fires only when due at once.
const clock: Clock = { ...createManualClock(), now: () => seconds * 1000, seconds: () => seconds }
const events = createEventBus<RecordEvents>(createLogger('silent'))
let realtime: Realtime | undefined

async function start(open: Opener, options: { maxPendingEvents?: number } = {}): Promise<Realtime> {
  realtime = await createRealtime({
    events,
    pubsub: createMemoryPubSub(),
    open,
    clock,
    log: createLogger('silent'),
    inbox: { listen: () => () => {} },
    ...options,
  })
  return realtime
}

const caller = (expiresAt: number | null = null): StreamCaller => ({
  principal,
  refresh: async () => principal,
  document: null,
  expiresAt,
})
const create = (id: string) =>
  events.emit('record.create', {
    projectId: 'p1',
    collection: 'tasks',
    before: null,
    after: { id, deleted_at: null },
    principal: { id: 'u1', kind: 'user', role: 'editor' },
    at: seconds,
  })

afterEach(async () => {
  await realtime?.close()
  realtime = undefined
  seconds = 1000
})

describe('realtime service', () => {
  it('delivers each write once, in order, under one id per write', async () => {
    const service = await start(async () => opened)
    const { sink, sent } = fakeSink()
    service.attach(await service.subscribe(caller(), 'tasks', {}), sink)
    for (const id of ['a', 'b', 'c']) create(id)
    await settle(() => sent.length === 3)
    expect(sent.map((s) => s.message)).toEqual(
      ['a', 'b', 'c'].map((id) => ({
        type: 'record.create',
        collection: 'tasks',
        record: {
          id,
          created_at: null,
          updated_at: null,
          created_by: null,
          updated_by: null,
          deleted_at: null,
          _version: null,
        },
        at: 1000,
      })),
    )
    expect(new Set(sent.map((s) => s.id)).size).toBe(3)
    expect(service.openStreams()).toBe(1)
  })

  it('ends a capability-token stream when the token expires (timer), with unauthorized', async () => {
    const service = await start(async () => opened)
    const { sink, closes, isClosed } = fakeSink()
    service.attach(await service.subscribe(caller(1000), 'tasks', {}), sink)
    await settle(isClosed)
    expect(closes).toEqual([{ error: 'unauthorized', message: 'The capability token has expired' }])
    expect(service.openStreams()).toBe(0)
  })

  it('refuses to deliver past the expiry even before the timer fires', async () => {
    const service = await start(async () => opened)
    const { sink, sent, closes, isClosed } = fakeSink()
    service.attach(await service.subscribe(caller(1300), 'tasks', {}), sink)
    create('before-expiry')
    await settle(() => sent.length === 1)
    seconds = 1300
    create('after-expiry')
    await settle(isClosed)
    expect(sent.map((s) => s.message.record.id)).toEqual(['before-expiry'])
    expect(closes).toEqual([{ error: 'unauthorized', message: 'The capability token has expired' }])
  })

  it('closes the stream with the refusal when the caller may no longer read', async () => {
    let allowed = true
    const service = await start(async () => {
      if (!allowed) throw new AppError('forbidden', 'Missing permission collections/tasks:read')
      return opened
    })
    const { sink, closes, isClosed } = fakeSink()
    service.attach(await service.subscribe(caller(), 'tasks', {}), sink)
    allowed = false
    create('x')
    await settle(isClosed)
    expect(closes).toEqual([{ error: 'forbidden', message: 'Missing permission collections/tasks:read' }])
  })

  it('drops a stream whose permission checks cannot keep up (pending events capped)', async () => {
    let subscribed = false
    const service = await start(
      async () => {
        if (!subscribed) return opened
        return new Promise<Opened>(() => {}) // a check that never finishes
      },
      { maxPendingEvents: 2 },
    )
    const { sink, sent, isDropped } = fakeSink()
    service.attach(await service.subscribe(caller(), 'tasks', {}), sink)
    subscribed = true
    for (const id of ['1', '2', '3']) create(id)
    await settle(isDropped)
    expect(sent).toEqual([])
    expect(service.openStreams()).toBe(0)
  })

  it('closes every stream on close(), as a shutdown (no reason)', async () => {
    const service = await start(async () => opened)
    const one = fakeSink()
    const two = fakeSink()
    service.attach(await service.subscribe(caller(), 'tasks', {}), one.sink)
    service.attach(await service.subscribe(caller(), 'tasks', {}), two.sink)
    await service.close()
    realtime = undefined
    expect([one.closes, two.closes]).toEqual([[null], [null]])
  })
})

describe('parseIds', () => {
  it.each([
    [undefined, null],
    ['', null],
    [' ', null],
    ['a', ['a']],
    ['a, b ,,c', ['a', 'b', 'c']],
    ['a,a', ['a']],
  ])('%j → %j', (raw, ids) => {
    const parsed = parseIds(raw)
    expect(parsed === null ? null : [...parsed]).toEqual(ids)
  })

  it.each(['a/b', 'a b', 'x'.repeat(65), Array.from({ length: 101 }, (_, i) => `i${i}`).join(',')])(
    'refuses %s',
    (raw) => {
      expect(() => parseIds(raw)).toThrow(expect.objectContaining({ code: 'invalid_request' }))
    },
  )
})
