import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Logger } from '../../../lib/log.js'
import type { PubSub, Unsubscribe } from '../../../lib/pubsub/index.js'
import type { PublishResult, R2SqlRef } from './types.js'

const publishChannel = 'plinth:r2-sql:publish'
const replyChannel = 'plinth:r2-sql:published'

/**
 * Publishing across instances, over pub/sub: asking the instance that holds a collection's writes to
 * publish them (and waiting for its answer), asking every instance to publish what it holds, and
 * answering such requests here.
 */
export function createPublishRequests(deps: {
  pubsub: PubSub
  clock: Clock
  log: Logger
  /** How long an answer is waited for. */
  answerMs: number
  /** Publishes one collection if this instance holds its claim: null when it does not, or had nothing to say. */
  publishIfHeld(ref: R2SqlRef): Promise<PublishResult | null>
  /** Publishes every claim this instance holds. */
  publishHeld(): Promise<void>
}) {
  const { pubsub, clock, log } = deps
  const waiting = new Map<string, { resolve: (r: PublishResult) => void; reject: (e: unknown) => void }>()

  async function onPublishRequest(message: string): Promise<void> {
    const request = JSON.parse(message) as {
      all?: boolean
      requestId?: string
      projectId?: string
      collectionId?: string
    }
    if (request.all) return deps.publishHeld()
    if (!request.collectionId || !request.projectId || !request.requestId) return
    const ref = { projectId: request.projectId, id: request.collectionId }
    try {
      const result = await deps.publishIfHeld(ref)
      if (result) await pubsub.publish(replyChannel, JSON.stringify({ requestId: request.requestId, result }))
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'service_unavailable'
      await pubsub.publish(
        replyChannel,
        JSON.stringify({
          requestId: request.requestId,
          error: { code, message: err instanceof Error ? err.message : 'failed' },
        }),
      )
    }
  }

  function onReply(message: string): void {
    const reply = JSON.parse(message) as {
      requestId: string
      result?: PublishResult
      error?: { code: string; message: string }
    }
    const waiter = waiting.get(reply.requestId)
    if (!waiter) return
    waiting.delete(reply.requestId)
    if (reply.result) waiter.resolve(reply.result)
    else
      waiter.reject(
        new AppError(
          reply.error?.code === 'conflict' ? 'conflict' : 'service_unavailable',
          reply.error?.message ?? 'Publishing failed',
        ),
      )
  }

  return {
    /** Starts answering requests (and hearing replies); the unsubscribes are the caller's to call. */
    async subscribe(): Promise<Unsubscribe[]> {
      return [
        await pubsub.subscribe(publishChannel, (m) => {
          void onPublishRequest(m).catch((err: unknown) => log.error({ err }, 'r2_sql publish request failed'))
        }),
        await pubsub.subscribe(replyChannel, onReply),
      ]
    },

    /** Asks the instance holding the collection's writes to publish them. Throws service_unavailable when it does not answer in time, conflict. */
    async ask(ref: R2SqlRef): Promise<PublishResult> {
      const requestId = newId()
      const answered = new Promise<PublishResult>((resolve, reject) => waiting.set(requestId, { resolve, reject }))
      await pubsub.publish(
        publishChannel,
        JSON.stringify({ requestId, projectId: ref.projectId, collectionId: ref.id }),
        { awaitDelivery: true },
      )
      const timeout = new AbortController()
      try {
        return await Promise.race([
          answered,
          clock.sleep(deps.answerMs, timeout.signal).then(() => {
            throw new AppError(
              'service_unavailable',
              'The instance holding the unpublished writes did not publish them in time',
              { reason: 'writer_unresponsive' },
            )
          }),
        ])
      } finally {
        timeout.abort()
        waiting.delete(requestId)
      }
    },

    /** Asks every instance to publish what it holds. */
    async everywhere(): Promise<void> {
      await pubsub.publish(publishChannel, JSON.stringify({ all: true }))
    },
  }
}
