// @plinth/client: the typed client for one Plinth instance (packages/client/README.md, docs/sdk.md).
import { createTransport, type Transport } from './transport.js'
import { memoryTokenStore, type TokenStore } from './token-store.js'
import { createAuth, type Auth } from './auth.js'
import { createCollectionClient, type CollectionClient } from './records.js'
import type { components } from './generated/openapi.js'
import { createFiles, type Files } from './files.js'
import { createFlows, type Flows } from './flows.js'
import { createRealtime, type Realtime, type WebSocketConstructor } from './realtime.js'
import { createTools, type Tools } from './tools.js'

export * from './errors.js'
export * from './token-store.js'
export type { Query, RequestOptions, Transport } from './transport.js'
export type { ApiKey, Auth, CreatedApiKey, Session, SignedIn, SignInCredentials, SignInOptions } from './auth.js'
export type {
  Condition,
  FieldKey,
  Filter,
  NumberVariable,
  Operators,
  RecordOf,
  SortKey,
  SystemFields,
  SystemKey,
  TextVariable,
} from './filter.js'
export type {
  CollectionClient,
  GetOptions,
  ImportResult,
  JsonOperators,
  ListOptions,
  ListPage,
  RecordInput,
  UpdateOptions,
} from './records.js'
export type { ExportOptions, ExportProgress, ImportJob, ImportOptions, RecordExchange } from './records-exchange.js'
export type {
  components as ApiComponents,
  operations as ApiOperations,
  paths as ApiPaths,
} from './generated/openapi.js'
/** The API's named shapes (Flow, FlowStep, FlowCreateWebhook, ImportJob, …), generated from the OpenAPI document. */
export type ApiSchemas = components['schemas']
export * from './files.js'
export * from './flows.js'
export * from './realtime.js'
export * from './tools.js'

export interface ClientOptions {
  /** The instance, e.g. http://127.0.0.1:8090. */
  url: string
  /** An sk- key: sent on every call instead of a session token (servers and scripts). */
  apiKey?: string
  /** Where a signed-in session's token is kept; memory by default. */
  tokens?: TokenStore
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
  /**
   * A WebSocket constructor for realtime: the platform's by default (browsers, Node 22+). Node 20 has none:
   * pass the `ws` package's, or subscriptions use Server-Sent Events. `null`: never WebSocket (a proxy that
   * drops upgrades), Server-Sent Events only.
   */
  WebSocket?: WebSocketConstructor | null
  /**
   * For pages served by the same Plinth (its admin UI): sign-in asks for a cookie session, so the token
   * lives in an HttpOnly cookie script cannot read; unsafe calls send the CSRF token from its readable
   * cookie. `auth.signedIn` is then unknown until `auth.session()` answers.
   */
  cookieSession?: boolean
}

/** Collections as `plinth types` writes them: collection name → record interface. Untyped by default. */
export type AnyCollections = Record<string, Record<string, unknown>>

export interface PlinthClient<C extends object = AnyCollections> {
  readonly transport: Transport
  readonly auth: Auth
  /** The records of a collection, typed by `Collections[name]` (from `plinth types`) or by the type given. */
  collection<K extends keyof C & string>(name: K): CollectionClient<C[K]>
  collection<R extends object>(name: string): CollectionClient<R>
  readonly realtime: Realtime
  /** Shorthand for `realtime.subscribe`. */
  readonly subscribe: Realtime['subscribe']
  readonly files: Files
  readonly flows: Flows
  readonly tools: Tools
}

/**
 * A client for one instance. Each part (auth, records, realtime, files, flows) is its own file over the
 * same Transport; they are attached here. `C` is the project's collections (`plinth types` output).
 */
export function createClient<C extends object = AnyCollections>(options: ClientOptions): PlinthClient<C> {
  const transport = createTransport({
    baseUrl: options.url,
    tokens: options.tokens ?? memoryTokenStore(),
    apiKey: options.apiKey,
    fetch: options.fetch,
    cookieSession: options.cookieSession,
  })
  const realtime = createRealtime(transport, { WebSocket: options.WebSocket })
  const live = {
    realtime,
    subscribe: realtime.subscribe,
    files: createFiles(transport),
    flows: createFlows(transport),
    tools: createTools(transport),
  }
  return {
    transport,
    auth: createAuth(transport),
    collection: (name: string) => createCollectionClient(transport, name),
    ...live,
  }
}
