import type { Clock } from '../../lib/clock.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import { compileFilter, type ResolvedFilterNode } from '../../lib/filter/index.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import { newId } from '../../lib/ids.js'
import type { InboxChannel } from '../notifications/index.js'
import { systemColumns } from '../collections/index.js'
import { requestFilter as listFilter, type Opened, type Opener, type RecordEvents } from '../records/index.js'
import { fieldsOf, messageFor, type StreamView } from './delivery.js'
import { createHub, type PublishedEvent } from './hub.js'
import type { CloseReason, Sink, SinkOptions } from './sink.js'

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

/** Who a stream is for, and how to learn who that is at each event. */
export interface StreamCaller {
  readonly principal: Principal
  /** The caller as of now (a revoked session, a role change, a revoked key apply); throws unauthorized. */
  refresh(): Promise<Principal>
  /** A capability token's one record; null for sessions, keys and anonymous callers. */
  readonly document: { readonly collection: string; readonly id: string } | null
  /** When a capability token stops working (Unix seconds); null otherwise. */
  readonly expiresAt: number | null
}

export interface StreamQuery {
  filter?: string
  ids?: string
}

/** A checked stream request, ready to be attached to a connection. */
export interface Subscription {
  readonly projectId: string
  readonly collection: string
  readonly view: StreamView
  /** Fields the request's filter reads: each must stay readable for the stream to go on. */
  readonly filterFields: ReadonlySet<string>
  readonly caller: StreamCaller
}

const idPattern = /^[A-Za-z0-9_-]{1,64}$/
const maxIds = 100
const alwaysReadable: ReadonlySet<string> = new Set(systemColumns.map((c) => c.name))

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

  /** Feeds one connection, one event at a time and in order. */
  function feed(subscription: Subscription, sink: Sink): (event: PublishedEvent) => void {
    const { caller, collection } = subscription
    let chain = Promise.resolve()
    let pending = 0
    let open = true
    sink.onClose(() => {
      open = false
    })

    async function deliver(event: PublishedEvent): Promise<void> {
      if (!open) return
      if (caller.expiresAt !== null && deps.clock.seconds() >= caller.expiresAt) {
        return sink.close({ error: 'unauthorized', message: 'The capability token has expired' })
      }
      let opened: Opened
      try {
        opened = await deps.open(await caller.refresh(), collection, 'read')
      } catch (err) {
        return sink.close(reasonOf(err))
      }
      const allow = opened.scope.fields
      const hidden = allow
        ? [...subscription.filterFields].find((f) => !alwaysReadable.has(f) && !allow.includes(f))
        : undefined
      if (hidden !== undefined)
        return sink.close({
          error: 'forbidden',
          message: `The stream's filter reads ${hidden}, which you may no longer read`,
        })
      const message = messageFor(event, opened, subscription.view)
      if (message && open) sink.send(message, event.id)
    }

    return (event) => {
      if (!open) return
      // Checks that cannot keep up are a slow consumer too: drop rather than queue without bound.
      if (pending >= maxPending) return sink.drop()
      pending++
      chain = chain.then(() => deliver(event)).finally(() => void pending--)
    }
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
      const stopListening = hub.listen(subscription.projectId, subscription.collection, feed(subscription, sink))
      const onStop = () => sink.close(null)
      stopping?.addEventListener('abort', onStop, { once: true })
      const { expiresAt } = subscription.caller
      const expiry = new AbortController()
      if (expiresAt !== null) {
        deps.clock.sleep(expiresAt * 1000 - deps.clock.now(), expiry.signal).then(
          () => sink.close({ error: 'unauthorized', message: 'The capability token has expired' }),
          () => {}, // the stream ended first
        )
      }
      sink.onClose(() => {
        sinks.delete(sink)
        stopListening()
        stopping?.removeEventListener('abort', onStop)
        expiry.abort()
      })
      if (stopping?.aborted) sink.close(null)
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
          if (open) sink.send(message, newId())
        })
      })
      const onStop = () => sink.close(null)
      stopping?.addEventListener('abort', onStop, { once: true })
      sink.onClose(() => {
        open = false
        sinks.delete(sink)
        stopListening()
        stopping?.removeEventListener('abort', onStop)
      })
      if (stopping?.aborted) sink.close(null)
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
