import WebSocket from 'ws'
import {
  createClient,
  memoryTokenStore,
  type PlinthClient,
  type SubscriptionEvent,
  type WebSocketConstructor,
} from '../../packages/client/src/index.js'

/** The `ws` package's WebSocket as the client takes it (Node 20 has no global one). */
export const NodeWebSocket: WebSocketConstructor = WebSocket

/** A client for a server, signed in with a session token (or anonymous). */
export function clientFor(url: string, token?: string, options: { webSocket?: boolean } = {}): PlinthClient {
  const tokens = memoryTokenStore()
  if (token) tokens.set({ token })
  return createClient({ url, tokens, WebSocket: options.webSocket === false ? null : NodeWebSocket })
}

/** Collects a subscription's events; `until` resolves once one matches (the test's timeout bounds the wait). */
export function collector<T = Record<string, unknown>>() {
  const events: SubscriptionEvent<T>[] = []
  const waiters = new Set<() => void>()
  return {
    events,
    handler: (event: SubscriptionEvent<T>) => {
      events.push(event)
      for (const wake of [...waiters]) wake()
    },
    until(match: (event: SubscriptionEvent<T>) => boolean): Promise<SubscriptionEvent<T>> {
      return new Promise((resolve) => {
        const check = () => {
          const found = events.find(match)
          if (!found) return
          waiters.delete(check)
          resolve(found)
        }
        waiters.add(check)
        check()
      })
    },
  }
}

/** Event types and titles in order, for exact comparisons. */
export const summary = (events: SubscriptionEvent<{ title?: string }>[]) =>
  events.map((e) => (e.type === 'gap' ? 'gap' : `${e.type} ${e.record.title}`))
