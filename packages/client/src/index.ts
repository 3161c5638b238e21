// @plinth/client: the typed client for one Plinth instance (packages/client/README.md).
import { createTransport, type Transport } from './transport.js'
import { memoryTokenStore, type TokenStore } from './token-store.js'
// --- sdk-live: realtime, files, flows, tools (imports) ---
import { createFiles, type Files } from './files.js'
import { createFlows, type Flows } from './flows.js'
import { createRealtime, type Realtime, type WebSocketConstructor } from './realtime.js'
import { createTools, type Tools } from './tools.js'
// --- end sdk-live ---

export * from './errors.js'
export * from './token-store.js'
export type { Query, RequestOptions, Transport } from './transport.js'
// --- sdk-live: realtime, files, flows, tools (exports) ---
export * from './files.js'
export * from './flows.js'
export * from './realtime.js'
export * from './tools.js'
// --- end sdk-live ---

export interface ClientOptions {
  /** The instance, e.g. http://127.0.0.1:8090. */
  url: string
  /** An sk- key: sent on every call instead of a session token (servers and scripts). */
  apiKey?: string
  /** Where a signed-in session's token is kept; memory by default. */
  tokens?: TokenStore
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
  // --- sdk-live: options ---
  /**
   * A WebSocket constructor for realtime: the platform's by default (browsers, Node 22+). Node 20 has none:
   * pass the `ws` package's, or subscriptions use Server-Sent Events.
   */
  WebSocket?: WebSocketConstructor
  // --- end sdk-live ---
}

export interface PlinthClient {
  readonly transport: Transport
  // --- sdk-live: parts ---
  readonly realtime: Realtime
  /** Shorthand for `realtime.subscribe`. */
  readonly subscribe: Realtime['subscribe']
  readonly files: Files
  readonly flows: Flows
  readonly tools: Tools
  // --- end sdk-live ---
}

/**
 * A client for one instance. Each part (auth, records, realtime, files, flows) is its own file over the
 * same Transport; they are attached here.
 */
export function createClient(options: ClientOptions): PlinthClient {
  const transport = createTransport({
    baseUrl: options.url,
    tokens: options.tokens ?? memoryTokenStore(),
    apiKey: options.apiKey,
    fetch: options.fetch,
  })
  // --- sdk-live: parts ---
  const realtime = createRealtime(transport, { WebSocket: options.WebSocket })
  const live = {
    realtime,
    subscribe: realtime.subscribe,
    files: createFiles(transport),
    flows: createFlows(transport),
    tools: createTools(transport),
  }
  // --- end sdk-live ---
  return { transport, ...live }
}
