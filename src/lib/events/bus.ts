import type { Logger } from '../log.js'

type Handler<P> = (payload: P) => void | Promise<void>

/**
 * In-process events published after the fact (`user.login`, later `record.create`, `file.upload`…).
 * Handlers run after the current call stack and their failures are logged, never thrown at the publisher.
 */
export interface EventBus<Events extends Record<string, unknown>> {
  on<K extends keyof Events & string>(type: K, handler: Handler<Events[K]>): () => void
  emit<K extends keyof Events & string>(type: K, payload: Events[K]): void
}

export function createEventBus<Events extends Record<string, unknown>>(log: Logger): EventBus<Events> {
  const handlers = new Map<string, Set<Handler<never>>>()
  return {
    on(type, handler) {
      let set = handlers.get(type)
      if (!set) handlers.set(type, (set = new Set()))
      set.add(handler as Handler<never>)
      return () => void set.delete(handler as Handler<never>)
    },
    emit(type, payload) {
      const set = handlers.get(type)
      if (!set || set.size === 0) return
      for (const handler of set) {
        queueMicrotask(() => {
          Promise.resolve()
            .then(() => (handler as Handler<typeof payload>)(payload))
            .catch((err: unknown) => log.error({ err, event: type }, 'event handler failed'))
        })
      }
    },
  }
}
