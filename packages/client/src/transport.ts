import { errorFor, NetworkError, PlinthError, RateLimitError } from './errors.js'
import type { TokenStore } from './token-store.js'

export type Query = Record<string, string | number | boolean | undefined | null>

export interface RequestOptions {
  /** JSON-encoded unless it is a Blob, ArrayBuffer, Uint8Array, FormData, ReadableStream or string. */
  body?: unknown
  query?: Query | undefined
  headers?: Record<string, string> | undefined
  signal?: AbortSignal | undefined
  /** 'json' (default) parses the body; 'response' hands back the raw Response of a 2xx answer. */
  as?: 'json' | 'response' | undefined
}

/**
 * What every part of the client calls: one instance's base URL, the credential, and fetch. Parts take a
 * Transport rather than the client so that each file stands alone (auth, records, realtime, files, flows).
 */
export interface Transport {
  readonly baseUrl: string
  readonly fetch: typeof fetch
  readonly tokens: TokenStore
  /** Whether the session is a cookie the client never sees (ClientOptions.cookieSession). */
  readonly cookieSession: boolean
  /** The project calls act in (`X-Project-Id`; a super_admin's other projects); null: the caller's own. */
  project: string | null
  /** The credential sent as `Authorization: Bearer …`: an sk- key given at creation, else the stored session token. */
  credential(): string | undefined
  /** The parsed body of a 2xx answer (undefined for 204); throws a PlinthError otherwise. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>
  /** The absolute URL for a path and query (download links, the realtime socket). */
  url(path: string, query?: Query): string
}

export interface TransportOptions {
  baseUrl: string
  tokens: TokenStore
  apiKey?: string | undefined
  fetch?: typeof fetch | undefined
  /** The session is the browser's HttpOnly cookie (pages Plinth serves): see ClientOptions.cookieSession. */
  cookieSession?: boolean | undefined
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The readable CSRF cookie a cookie session comes with (decision 078), from `document.cookie`. */
function csrfToken(): string | undefined {
  const jar = (globalThis as { document?: { cookie?: string } }).document?.cookie ?? ''
  for (const part of jar.split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === 'plinth_csrf') return decodeURIComponent(value.join('='))
  }
  return undefined
}

function isRawBody(body: unknown): boolean {
  return (
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    body instanceof Uint8Array ||
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    (typeof FormData !== 'undefined' && body instanceof FormData) ||
    (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream)
  )
}

export function createTransport(options: TransportOptions): Transport {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  // Bound late so a test (or a polyfill) that replaces globalThis.fetch after creation is honoured.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const url = (path: string, query?: Query): string => {
    const target = new URL(`${baseUrl}${path}`)
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) target.searchParams.set(key, String(value))
    }
    return target.toString()
  }
  const credential = () => options.apiKey ?? options.tokens.get()?.token
  let project: string | null = null
  return {
    baseUrl,
    fetch: doFetch,
    tokens: options.tokens,
    cookieSession: options.cookieSession === true,
    get project() {
      return project
    },
    set project(value: string | null) {
      project = value
    },
    credential,
    url,
    async request<T>(method: string, path: string, req: RequestOptions = {}): Promise<T> {
      const headers: Record<string, string> = { accept: 'application/json', ...req.headers }
      const token = credential()
      if (token && headers.authorization === undefined) headers.authorization = `Bearer ${token}`
      if (project && headers['x-project-id'] === undefined) headers['x-project-id'] = project
      if (options.cookieSession) {
        headers['x-plinth-session'] = 'cookie'
        const csrf = safeMethods.has(method.toUpperCase()) ? undefined : csrfToken()
        if (csrf) headers['x-csrf-token'] = csrf
      }
      let body: RequestInit['body'] | undefined
      if (req.body !== undefined) {
        if (isRawBody(req.body)) body = req.body as RequestInit['body']
        else {
          body = JSON.stringify(req.body)
          headers['content-type'] ??= 'application/json'
        }
      }
      let res: Response
      try {
        res = await doFetch(url(path, req.query), {
          method,
          headers,
          body,
          signal: req.signal,
          ...(typeof ReadableStream !== 'undefined' && body instanceof ReadableStream ? { duplex: 'half' } : {}),
        } as RequestInit)
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause
        const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))
        const aborted = err instanceof Error && err.name === 'AbortError'
        throw new NetworkError(null, aborted ? 'aborted' : 'unreachable', `${method} ${path}: ${why}`)
      }
      if (res.ok && req.as === 'response') return res as T
      const text = await res.text()
      let parsed: unknown
      try {
        parsed = text === '' ? undefined : JSON.parse(text)
      } catch {
        parsed = text
      }
      if (res.ok) return parsed as T
      const envelope = (parsed ?? {}) as { error?: unknown; message?: unknown; details?: unknown }
      const error = errorFor(
        res.status,
        typeof envelope.error === 'string' ? envelope.error : `http_${res.status}`,
        typeof envelope.message === 'string' ? envelope.message : `${method} ${path} answered ${res.status}`,
        envelope.details && typeof envelope.details === 'object' ? (envelope.details as Record<string, unknown>) : {},
      )
      if (error instanceof RateLimitError) {
        const after = Number(res.headers.get('retry-after'))
        error.retryAfter = Number.isFinite(after) && after > 0 ? after : undefined
      }
      throw error
    },
  }
}

export { PlinthError }
