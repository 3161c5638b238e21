import type { Clock } from '../../lib/clock.js'
import { signatureHeader, timestampHeader, webhookSignatureHeaders } from '../../lib/crypto/index.js'
import type { EventBus } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { isOutboundError, type OutboundClient } from '../../lib/outbound/index.js'
import type { Job, JobQueue } from '../../lib/queue/index.js'
import type { RecordEvent, RecordEvents } from '../records/index.js'
import { recordEvents, type RecordEventName } from './schemas.js'
import type { WebhooksService } from './service.js'
import type { DeliveryRow } from './store.js'

/** How deliveries are retried (decision 034). */
export interface DeliveryOptions {
  /** Sends in all, the first included. */
  readonly attempts: number
  /** The wait before the first retry; each later one waits twice the one before (exponential). */
  readonly backoffMs: number
  /** One send, redirects and the answer's body included. */
  readonly timeoutMs: number
}

/** 6 sends over about 15 minutes: 30 s, 1, 2, 4 and 8 min between them. */
export const deliveryDefaults: DeliveryOptions = { attempts: 6, backoffMs: 30_000, timeoutMs: 10_000 }

export interface DeliveriesDeps {
  webhooks: WebhooksService
  queue: JobQueue
  events: EventBus<RecordEvents>
  outbound: OutboundClient
  clock: Clock
  log: Logger
  options: DeliveryOptions
}

type DeliveryJobs = { deliver: { projectId: string; deliveryId: string }; prune: Record<string, never> }

/** The job key of a delivery: queued twice (a fan-out, then start-up), it still runs once. */
const deliveryKey = (id: string) => `delivery.${id}`
const requeuePage = 500

interface Attempt {
  attempt: number
  at: number
  status: number | null
  durationMs: number
  error: string | null
}

// Set by the sender: a stored header of the same name would contradict the body or the signature.
const ours = new Set([
  'content-type',
  signatureHeader.toLowerCase(),
  timestampHeader.toLowerCase(),
  'x-service-event',
  'x-service-delivery',
])
// The receiver's trouble, worth sending again; any other answer refuses this payload for good.
const retryableStatus = (status: number) => status >= 500 || status === 408 || status === 429
// Outbound failures the same request would meet again.
const finalOutbound = new Set(['bad_url', 'bad_request', 'blocked_address', 'too_large', 'too_many_redirects'])

/**
 * Collection webhook deliveries: on every record event, each active webhook of the collection listening
 * to it gets a delivery row (the exact JSON body, kept for every retry) and a job on the
 * `webhook-deliveries` queue (lib/queue: in process, or shared through Redis). The job POSTs the body
 * through lib/outbound (the private-address rule on every hop), signed as webhook_dispatch signs, and
 * records each attempt's status and duration; a 5xx, 408, 429, timeout or network failure is retried with
 * exponential backoff by the queue until the attempts run out.
 */
export async function startDeliveries(deps: DeliveriesDeps) {
  const { webhooks, clock, log, options } = deps
  const store = webhooks.store
  const queue = await deps.queue.define<DeliveryJobs>('webhook-deliveries', {
    concurrency: 4,
    handlers: {
      deliver: (job) => deliver(job),
      prune: async () => void (await webhooks.pruneDeliveries()),
    },
    // A run that threw for another reason than the receiver (a database outage) on its last attempt: the log says so.
    onFailed: async (job) => {
      const delivery = await store.deliveryById(job.data.projectId, job.data.deliveryId)
      if (!delivery || delivery.status === 'success' || delivery.status === 'failed') return
      const log = JSON.parse(delivery.attempt_log) as Attempt[]
      await settle(delivery, log, 'failed', {
        attempt: log.length + 1,
        at: clock.now(),
        status: null,
        durationMs: 0,
        error: 'internal',
      })
    },
  })

  // Once a day across every instance (one schedule id: declaring it again replaces it).
  await queue.schedule('webhook-deliveries-prune', { pattern: '17 3 * * *', job: 'prune', data: {} })

  async function fanOut(name: RecordEventName, event: RecordEvent): Promise<void> {
    const listening = await webhooks.listening(event.projectId, event.collection, name)
    for (const webhook of listening) {
      const id = newId()
      const now = clock.now()
      // The event as published (docs/events.md), named; the in-process principal is not enumerable and stays out.
      const payload = JSON.stringify({
        event: name,
        webhookId: webhook.id,
        deliveryId: id,
        ...(JSON.parse(JSON.stringify(event)) as object),
      })
      const record = event.after ?? event.before
      const row: DeliveryRow = {
        id,
        project_id: event.projectId,
        webhook_id: webhook.id,
        event: name,
        collection: event.collection,
        record_id: typeof record?.id === 'string' ? record.id : null,
        status: 'pending',
        payload,
        attempts: 0,
        attempt_log: '[]',
        response_status: null,
        duration_ms: null,
        error: null,
        created_at: now,
        updated_at: now,
      }
      try {
        await store.insertDelivery(row)
        await queue.add(
          'deliver',
          { projectId: event.projectId, deliveryId: id },
          {
            attempts: options.attempts,
            backoff: { type: 'exponential', delayMs: options.backoffMs },
            key: deliveryKey(id),
          },
        )
      } catch (err) {
        log.warn(
          { err, webhookId: webhook.id, projectId: event.projectId, event: name },
          'webhook delivery could not be queued',
        )
      }
    }
  }

  async function deliver(job: Job<DeliveryJobs['deliver'], 'deliver'>): Promise<void> {
    const { projectId, deliveryId } = job.data
    const delivery = await store.deliveryById(projectId, deliveryId)
    // Gone with its webhook, or settled by an earlier run of this job (a stalled job run again on Redis).
    if (!delivery || delivery.status === 'success' || delivery.status === 'failed') return
    const target = await webhooks.target(projectId, delivery.webhook_id)
    if (!target) return
    const log: Attempt[] = JSON.parse(delivery.attempt_log) as Attempt[]
    // Numbered by the delivery's own log: a delivery queued again at start-up goes on from its last attempt.
    const number = log.length + 1
    if (!target.active)
      return settle(delivery, log, 'failed', {
        attempt: number,
        at: clock.now(),
        status: null,
        durationMs: 0,
        error: 'webhook_inactive',
      })

    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(target.headers)) if (!ours.has(name.toLowerCase())) headers[name] = value
    Object.assign(headers, {
      'content-type': 'application/json',
      'X-Service-Event': delivery.event,
      'X-Service-Delivery': delivery.id,
    })
    if (target.secret !== null)
      Object.assign(headers, webhookSignatureHeaders(target.secret, delivery.payload, new Date(clock.now())))

    const at = clock.now()
    const started = performance.now()
    let status: number | null = null
    let error: string | null = null
    let retryable = false
    try {
      const res = await deps.outbound.fetch(target.url, {
        method: 'POST',
        headers,
        body: delivery.payload,
        timeoutMs: options.timeoutMs,
        signal: job.signal,
        maxResponseBytes: 1024 * 1024,
      })
      status = res.status
      if (status < 200 || status > 299) {
        error = `http_${status}`
        retryable = retryableStatus(status)
      }
    } catch (err) {
      if (!isOutboundError(err)) throw err
      error = err.code === 'timeout' ? 'timed_out' : err.code === 'network' ? 'network_error' : err.code
      retryable = !finalOutbound.has(err.code)
    }
    const attempt: Attempt = { attempt: number, at, status, durationMs: Math.round(performance.now() - started), error }
    if (error === null) return settle(delivery, log, 'success', attempt)
    if (retryable && job.attempt < job.attempts) {
      await settle(delivery, log, 'retrying', attempt)
      // The queue retries after its backoff; the message carries no URL, header or payload.
      throw new Error(`Webhook delivery ${delivery.id} attempt ${number} failed: ${error}`)
    }
    return settle(delivery, log, 'failed', attempt)
  }

  async function settle(
    delivery: DeliveryRow,
    log: Attempt[],
    status: 'success' | 'failed' | 'retrying',
    attempt: Attempt,
  ): Promise<void> {
    const attempts = [...log, attempt]
    await store.recordOutcome(delivery.project_id, delivery.id, {
      status,
      attempts: attempts.length,
      attempt_log: JSON.stringify(attempts),
      response_status: attempt.status,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      updated_at: clock.now(),
    })
  }

  /**
   * Queues again every delivery left pending or retrying (a restart, a job lost with Redis, a crash between
   * the row and its job), keyed so one still queued is not doubled. A retrying one waits out what is left
   * of its backoff and gets the attempts it has left.
   */
  async function requeueUnsettled(): Promise<number> {
    let queued = 0
    for (let after = ''; ; ) {
      const page = await store.unsettledDeliveriesOfAllProjects(after, requeuePage)
      for (const delivery of page) {
        const attempts = Math.max(1, options.attempts - delivery.attempts)
        const due = delivery.attempts === 0 ? 0 : delivery.updated_at + options.backoffMs * 2 ** (delivery.attempts - 1)
        const delayMs = Math.min(Math.max(0, Math.round(due - clock.now())), 24 * 3_600_000)
        await queue.add(
          'deliver',
          { projectId: delivery.project_id, deliveryId: delivery.id },
          {
            // The backoff goes on doubling from where the delivery is: the next wait is the one after its attempts.
            attempts,
            backoff: {
              type: 'exponential',
              delayMs: Math.min(options.backoffMs * 2 ** delivery.attempts, 24 * 3_600_000),
            },
            delayMs,
            key: deliveryKey(delivery.id),
          },
        )
        queued++
      }
      if (page.length < requeuePage) return queued
      after = page[page.length - 1]!.id
    }
  }

  try {
    const queued = await requeueUnsettled()
    if (queued > 0)
      log.info({ deliveries: queued }, 'unsettled webhook deliveries queued (one still queued is not doubled)')
  } catch (err) {
    log.warn({ err }, 'unsettled webhook deliveries could not be queued again')
  }

  const offs = recordEvents.map((name) => deps.events.on(name, (event) => fanOut(name, event)))
  return {
    /** Stops listening for record events (queued deliveries stay with the queue). */
    stop: () => offs.forEach((off) => off()),
  }
}
