// @plinth/client: the typed client for one Plinth instance (packages/client/README.md).
import { createTransport, type Transport } from './transport.js'
import { memoryTokenStore, type TokenStore } from './token-store.js'

export * from './errors.js'
export * from './token-store.js'
export type { Query, RequestOptions, Transport } from './transport.js'

export interface ClientOptions {
  /** The instance, e.g. http://127.0.0.1:8090. */
  url: string
  /** An sk- key: sent on every call instead of a session token (servers and scripts). */
  apiKey?: string
  /** Where a signed-in session's token is kept; memory by default. */
  tokens?: TokenStore
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
}

export interface PlinthClient {
  readonly transport: Transport
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
  return { transport }
}
