import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import { compileFilter, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Logger } from '../../lib/log.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import { newId } from '../../lib/ids.js'
import type { InboxChannel } from '../notifications/index.js'
import { requestFilter as listFilter, type Opened, type Opener, type RecordEvents } from '../records/index.js'
import { fieldsOf } from './delivery.js'
import { createFanout } from './fanout.js'
import { Frame } from './frame.js'
import { createHub } from './hub.js'
import type { CloseReason, Sink, SinkOptions } from './sink.js'
import { keyOf, type StreamCaller, type Subscription } from './subscription.js'

export type { StreamCaller, Subscription } from './subscription.js'

export interface RealtimeOptions {
  /** SSE heartbeat comment and WebSocket ping interval; 25 s. */
  heartbeatMs?: number
  /** Bytes allowed to wait for a client that does not read before it is dropped; 1 MiB. */
  maxBufferedBytes?: number
  /** Events allowed to wait for their permission check per stream before it is dropped; 1000. */
  maxPendingEvents?: number
}

export interface RealtimeDeps extends RealtimeOptions {
  events: EventBus<RecordEvents>
  pubsub: PubSub
  open: Opener
  clock: Clock
  log: Logger
  /** Each user's live inbox channel (the notifications module's), served at /api/v1/notifications/stream. */
  inbox: InboxChannel
}

export interface StreamQuery {
  filter?: string
  ids?: string
}

const idPattern = /^[A-Za-z0-9_-]{1,64}$/
const maxIds = 100

/** `a,b,c` → the record ids a stream is limited to (null: all). Throws invalid_request. */
export function parseIds(raw: string | undefined): ReadonlySet<string> | null {
  if (raw === undefined || raw.trim() === '') return null
  const ids = raw
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '')
  if (ids.length > maxIds) throw new AppError('invalid_request', `ids: at most ${maxIds} record ids`, { field: 'ids' })
  const bad = ids.find((id) => !idPattern.test(id))
  if (bad !== undefined)
    throw new AppError('invalid_request', 'ids: each id is 1-64 letters, digits, - or _', { field: 'ids' })
  return new Set(ids)
}

/**
 * Realtime record streams (addendum §5): who may subscribe to what, and for each event, what each
 * subscriber receives. Every event is judged per subscriber at delivery, with the subscriber as it is
 * then: its credential is resolved again (session and key caches drop a revoked session, a ban or a role
 * change at once) and its collection opened again (role grants are cached until changed), so a change of
 * rights applies from the next event. A stream whose caller lost the right to read is closed.
 */
export async function createRealtime(deps: RealtimeDeps) {
  const options: SinkOptions = {
    clock: deps.clock,
    heartbeatMs: deps.heartbeatMs ?? 25_000,
    maxBufferedBytes: deps.maxBufferedBytes ?? 1024 * 1024,
  }
  const maxPending = deps.maxPendingEvents ?? 1000
  const hub = await createHub(deps)
  const sinks = new Set<Sink>()

  /**
   * The request's filter, checked exactly as a list's is (fields the caller may read, values of each
   * field's kind, comma lists converted) and resolved for the caller; compiled once so that a filter the
   * database could not run is refused now rather than on the first event.
   */
  function requestFilter(opened: Opened, raw: string | undefined): ResolvedFilterNode | null {
    const filter = listFilter(opened, raw, deps.clock.seconds())
    if (filter) compileFilter(filter, opened.requestResolver, opened.handle.kind)
    return filter
  }

  function reasonOf(err: unknown): CloseReason {
    if (isAppError(err) && err.status < 500) return { error: err.code, message: err.message }
    deps.log.error({ err }, 'realtime: checking a subscriber failed')
    return { error: 'internal', message: 'Internal server error' }
  }

  const fanout = createFanout({ open: deps.open, clock: deps.clock, reasonOf, maxPending })

  // One abort listener per shutdown signal, not one per stream: an EventTarget's listeners are a list, and
  // adding or removing one walks it.
  const stoppable = new Map<AbortSignal, Set<Sink>>()
  function closeOnStop(sink: Sink, stopping: AbortSignal | undefined): void {
    if (!stopping) return
    if (stopping.aborted) return sink.close(null)
    let set = stoppable.get(stopping)
    if (!set) {
      const members = new Set<Sink>()
      stoppable.set(stopping, (set = members))
      stopping.addEventListener(
        'abort',
        () => {
          stoppable.delete(stopping)
          for (const member of [...members]) member.close(null)
        },
        { once: true },
      )
    }
    set.add(sink)
    const members = set
    sink.onClose(() => void members.delete(sink))
  }

  return {
    /** Heartbeat and buffer cap for the connections of this service. */
    options,

    /**
     * Checks a stream request: the caller may read the collection (anonymous callers on a public one), the
     * filter and ids are well formed and name readable fields, and a capability token stays on its record.
     * Throws unauthorized, forbidden, collection_not_found, invalid_request.
     */
    async subscribe(caller: StreamCaller, name: string, query: StreamQuery): Promise<Subscription> {
      const { document } = caller
      if (document && document.collection !== name) {
        throw new AppError('forbidden', `This capability token opens one record of ${document.collection} only`, {
          resource: `collections/${name}`,
          action: 'read',
        })
      }
      const opened = await deps.open(caller.principal, name, 'read')
      let ids = parseIds(query.ids)
      if (document) {
        if (ids && (ids.size !== 1 || !ids.has(document.id))) {
          throw new AppError('forbidden', `This capability token opens record ${document.id} only`, {
            resource: `collections/${name}`,
            action: 'read',
          })
        }
        ids = new Set([document.id])
      }
      const filter = requestFilter(opened, query.filter)
      return {
        projectId: opened.collection.projectId,
        collection: name,
        view: { filter, ids },
        viewKey: keyOf([filter, ids ? [...ids].sort() : null]),
        filterFields: fieldsOf(filter),
        caller,
      }
    },

    /**
     * Starts feeding a connection. It ends when the client goes, when the caller loses access (told with a
     * `stream.closed` message), when a capability token expires, and on shutdown (`stopping`, or close()).
     */
    attach(subscription: Subscription, sink: Sink, stopping?: AbortSignal): void {
      sinks.add(sink)
      sink.onClose(() => void sinks.delete(sink))
      fanout.add(subscription, sink, (onEvent) => hub.listen(subscription.projectId, subscription.collection, onEvent))
      const { expiresAt } = subscription.caller
      if (expiresAt !== null) {
        const expiry = new AbortController()
        deps.clock.sleep(expiresAt * 1000 - deps.clock.now(), expiry.signal).then(
          () => sink.close({ error: 'unauthorized', message: 'The capability token has expired' }),
          () => {}, // the stream ended first
        )
        sink.onClose(() => expiry.abort())
      }
      closeOnStop(sink, stopping)
    },

    /**
     * Starts feeding a user's inbox messages (notification.create) to a connection. Only a signed-in person
     * has an inbox: a capability token, a key or an anonymous caller is refused (forbidden, unauthorized).
     * At each message the caller is resolved again, so a revoked session or a ban closes the stream.
     */
    attachInbox(caller: StreamCaller, sink: Sink, stopping?: AbortSignal): void {
      const { principal } = caller
      sinks.add(sink)
      let open = true
      let chain = Promise.resolve()
      const stopListening = deps.inbox.listen(principal.homeProjectId, principal.userId ?? '', (message) => {
        if (!open) return
        chain = chain.then(async () => {
          if (!open) return
          try {
            const now = await caller.refresh()
            if (now.userId !== principal.userId)
              return sink.close({ error: 'unauthorized', message: 'The stream belongs to another person' })
          } catch (err) {
            return sink.close(reasonOf(err))
          }
          if (open) sink.send(new Frame(message, newId()))
        })
      })
      sink.onClose(() => {
        open = false
        sinks.delete(sink)
        stopListening()
      })
      closeOnStop(sink, stopping)
    },

    /** Refuses an inbox stream to anyone but a signed-in person. Throws unauthorized, forbidden. */
    assertInboxCaller(caller: StreamCaller): void {
      const { principal } = caller
      if (principal.kind === 'anonymous') throw new AppError('unauthorized', 'Sign in to follow your notifications')
      if (principal.kind !== 'user' || principal.userId === null || caller.document !== null) {
        throw new AppError('forbidden', 'Notifications are followed by the person they are sent to, signed in', {
          kind: principal.kind,
        })
      }
    },

    /** How many streams this instance serves now. */
    openStreams: (): number => sinks.size,

    /** Ends every stream (clients reconnect elsewhere) and stops receiving events. */
    async close(): Promise<void> {
      for (const sink of [...sinks]) sink.close(null)
      await hub.close()
    },
  }
}

export type Realtime = Awaited<ReturnType<typeof createRealtime>>
