import type { Clock } from '../../lib/clock.js'
import { systemColumns } from '../collections/index.js'
import type { Opened, Opener } from '../records/index.js'
import { messageFor } from './delivery.js'
import { Frame } from './frame.js'
import type { PublishedEvent } from './hub.js'
import type { CloseReason, Sink } from './sink.js'
import { callerKeyOf, keyOf, type StreamCaller, type Subscription } from './subscription.js'

export interface FanoutDeps {
  open: Opener
  clock: Clock
  /** How a failed check closes a stream (a refusal is told; anything else is logged and told `internal`). */
  reasonOf(err: unknown): CloseReason
  /** Events allowed to wait for a collection's fan-out (the one under way included); past it, that collection's streams are dropped. */
  maxPending: number
  /** Frames written before the fan-out lets other work (requests, other sockets) run; 500. */
  batchSize?: number
}

interface Stream {
  readonly subscription: Subscription
  readonly sink: Sink
  open: boolean
  /** The group's event count when the stream joined: events that arrived before are not its own. */
  readonly since: number
}

/** What one caller may see of the collection now, or why its streams end. */
type Judgement = { readonly opened: Opened; readonly scopeKey: string } | { readonly reason: CloseReason }

/** The streams of one collection, fed one event at a time, in order. */
interface Group {
  readonly streams: Set<Stream>
  /** Events waiting, each numbered as it arrived. */
  readonly queue: { readonly event: PublishedEvent; readonly seq: number }[]
  /** Events received so far: a stream gets those numbered above the count when it joined. */
  received: number
  running: boolean
  /** Stops listening to the collection's events. */
  stop: () => void
}

/** Streams whose frames are identical for one event. */
interface VisibilityClass {
  readonly frame: Frame | null
  readonly refusal: CloseReason | null
  readonly streams: Stream[]
}

const expired: CloseReason = { error: 'unauthorized', message: 'The capability token has expired' }
const alwaysReadable: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

/** A number per object, for grouping keys (a collection's shape is a new object after a schema change). */
function serials() {
  const of = new WeakMap<object, number>()
  let next = 0
  return (value: object): number => {
    let n = of.get(value)
    if (n === undefined) of.set(value, (n = next++))
    return n
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Fans one collection's events out to its streams (decision 080). Per event:
 * 1. each distinct caller (StreamCaller.key) is resolved again and the collection opened for it once,
 *    whatever the number of its streams; a refused caller's streams are closed with the refusal;
 * 2. streams are grouped into visibility classes: the same shape, locale, resolved row filter (with any
 *    $CURRENT_USER already replaced by the user's id) and column allowlist, and the same request filter and
 *    ids. Everything the frame depends on is in the class key, so streams of a class receive identical
 *    bytes: the message is decided and serialised once per class;
 * 3. frames are written in batches of `batchSize`, yielding to the event loop before each batch, so the
 *    request that caused the event answers before any frame is written and a large fan-out never holds
 *    other requests for longer than one batch. Each sink applies its own backpressure (a cap on what waits).
 */
export function createFanout(deps: FanoutDeps) {
  const batchSize = deps.batchSize ?? 500
  const shapeSerial = serials()

  function scopeKeyOf(opened: Opened): string {
    const { rows, fields } = opened.scope
    return `${shapeSerial(opened.shape)}|${opened.locale}|${keyOf(rows)}|${keyOf(fields)}`
  }

  async function judge(caller: StreamCaller, collection: string, into: Map<string, Judgement>): Promise<void> {
    const key = callerKeyOf(caller)
    try {
      const opened = await deps.open(await caller.refresh(), collection, 'read')
      into.set(key, { opened, scopeKey: scopeKeyOf(opened) })
    } catch (err) {
      into.set(key, { reason: deps.reasonOf(err) })
    }
  }

  /** The field a class's filter reads that its allowlist no longer lets through, if any. */
  function hiddenFilterField(subscription: Subscription, opened: Opened): string | undefined {
    const allow = opened.scope.fields
    if (!allow) return undefined
    for (const field of subscription.filterFields)
      if (!alwaysReadable.has(field) && !allow.includes(field)) return field
    return undefined
  }

  async function deliver(event: PublishedEvent, streams: readonly Stream[]): Promise<void> {
    const now = deps.clock.seconds()
    const judgements = new Map<string, Judgement>()
    const checks: Promise<void>[] = []
    const seen = new Set<string>()
    const live: Stream[] = []
    for (const stream of streams) {
      if (!stream.open) continue
      const { caller, collection } = stream.subscription
      if (caller.expiresAt !== null && now >= caller.expiresAt) {
        stream.sink.close(expired)
        continue
      }
      live.push(stream)
      const key = callerKeyOf(caller)
      if (seen.has(key)) continue
      seen.add(key)
      checks.push(judge(caller, collection, judgements))
    }
    await Promise.all(checks)

    const classes = new Map<string, VisibilityClass>()
    for (const stream of live) {
      const judgement = judgements.get(callerKeyOf(stream.subscription.caller))!
      if ('reason' in judgement) {
        stream.sink.close(judgement.reason)
        continue
      }
      const key = `${judgement.scopeKey}\u0000${stream.subscription.viewKey}`
      let found = classes.get(key)
      if (!found) classes.set(key, (found = classify(event, stream.subscription, judgement.opened)))
      if (found.refusal) stream.sink.close(found.refusal)
      else if (found.frame) found.streams.push(stream)
    }

    let written = 0
    for (const { frame, streams: members } of classes.values()) {
      if (!frame) continue
      for (const stream of members) {
        if (written++ % batchSize === 0) await nextTurn()
        if (stream.open) stream.sink.send(frame)
      }
    }
  }

  /** What every stream of a class gets: one frame, nothing, or a refusal (its filter reads a field now hidden). */
  function classify(event: PublishedEvent, subscription: Subscription, opened: Opened): VisibilityClass {
    const hidden = hiddenFilterField(subscription, opened)
    if (hidden !== undefined) {
      const message = `The stream's filter reads ${hidden}, which you may no longer read`
      return { frame: null, refusal: { error: 'forbidden', message }, streams: [] }
    }
    const message = messageFor(event, opened, subscription.view)
    return { frame: message ? new Frame(message, event.id) : null, refusal: null, streams: [] }
  }

  const groups = new Map<string, Group>()

  async function run(group: Group): Promise<void> {
    group.running = true
    try {
      for (let next = group.queue.shift(); next; next = group.queue.shift()) {
        const { seq } = next
        await deliver(
          next.event,
          [...group.streams].filter((stream) => stream.since < seq),
        )
      }
    } finally {
      group.running = false
    }
  }

  function receive(key: string, group: Group, event: PublishedEvent): void {
    if (groups.get(key) !== group) return
    if (group.queue.length + (group.running ? 1 : 0) >= deps.maxPending) {
      // The fan-out cannot keep up: every stream here is behind. Drop them rather than queue without
      // bound; a new stream starts a new group, clear of whatever holds this one up.
      groups.delete(key)
      group.stop()
      group.queue.length = 0
      for (const stream of [...group.streams]) stream.sink.drop()
      return
    }
    group.queue.push({ event, seq: ++group.received })
    if (!group.running) void run(group)
  }

  return {
    /**
     * Starts feeding a stream; `listen` subscribes a collection's events (once per collection, while it
     * has streams here). The stream leaves when its sink closes.
     */
    add(subscription: Subscription, sink: Sink, listen: (onEvent: (event: PublishedEvent) => void) => () => void) {
      const key = `${subscription.projectId}/${subscription.collection}`
      let group = groups.get(key)
      if (!group) {
        const created: Group = { streams: new Set(), queue: [], received: 0, running: false, stop: () => {} }
        created.stop = listen((event) => receive(key, created, event))
        groups.set(key, (group = created))
      }
      const stream: Stream = { subscription, sink, open: true, since: group.received }
      const joined = group
      joined.streams.add(stream)
      sink.onClose(() => {
        stream.open = false
        joined.streams.delete(stream)
        if (joined.streams.size === 0 && groups.get(key) === joined) {
          groups.delete(key)
          joined.stop()
        }
      })
    },
  }
}

export type Fanout = ReturnType<typeof createFanout>
