import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'

type Build<R> = (actor: Principal, projectId: string, indexId: string, signal?: AbortSignal) => Promise<R>

interface Waiting<R> {
  readonly who: string
  readonly actor: Principal
  readonly signal: AbortSignal | undefined
  readonly done: Deferred<R>
}

interface Deferred<R> {
  readonly promise: Promise<R>
  resolve(value: R): void
  reject(err: unknown): void
}

// Promise.withResolvers is Node 22+; engines allow 20.19.
function deferred<R>(): Deferred<R> {
  let resolve!: (value: R) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<R>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Who a build acts as: two requests by the same caller share one build. */
function whoOf(p: Principal): string {
  return [p.kind, p.projectId, p.userId ?? '', p.roleId ?? '', p.apiKeyId ?? '', p.superAdmin ? 's' : ''].join('|')
}

/**
 * Builds of one index run one at a time in this instance. A request while a build runs waits for the
 * next one (it must see writes made after the running one started), and requests by the same caller
 * waiting together share that next build. Another instance may build the same index meanwhile: the store
 * keeps the newest build started (decision 042).
 */
export function createBuildRunner<R>(deps: { build: Build<R>; log: Logger }) {
  const lanes = new Map<string, { queue: Waiting<R>[]; running: Promise<void> }>()

  async function drain(key: string, projectId: string, indexId: string): Promise<void> {
    const lane = lanes.get(key)!
    while (lane.queue.length > 0) {
      const next = lane.queue.shift()!
      try {
        next.done.resolve(await deps.build(next.actor, projectId, indexId, next.signal))
      } catch (err) {
        next.done.reject(err)
      }
    }
    lanes.delete(key)
  }

  return {
    /** Asks for a build of the index as `actor`; resolves with what that build answers. */
    request(actor: Principal, projectId: string, indexId: string, signal?: AbortSignal): Promise<R> {
      const key = `${projectId}/${indexId}`
      const who = whoOf(actor)
      let lane = lanes.get(key)
      const shared = lane?.queue.find((w) => w.who === who && !w.signal && !signal)
      if (shared) return shared.done.promise
      const waiting: Waiting<R> = { who, actor, signal, done: deferred<R>() }
      if (lane) {
        lane.queue.push(waiting)
      } else {
        lane = { queue: [waiting], running: Promise.resolve() }
        lanes.set(key, lane)
        lane.running = drain(key, projectId, indexId).catch((err: unknown) =>
          deps.log.error({ err, indexId }, 'search index builds stopped'),
        )
      }
      return waiting.done.promise
    },

    /** Resolves once no build is running or waiting in this instance. */
    async settled(): Promise<void> {
      while (lanes.size > 0) await Promise.all([...lanes.values()].map((l) => l.running))
    },
  }
}
