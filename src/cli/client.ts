/**
 * A failed call: the API's error envelope (`{ error, message, details }`), or `unreachable` /
 * `bad_response` when there was no usable answer. `body` is what came back, for --json.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number | null,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly body: unknown = undefined,
  ) {
    super(message)
  }
}

/** The JSON API of one running instance, as the holder of one credential. */
export interface Client {
  readonly baseUrl: string
  /** The parsed body of a 2xx answer; throws ApiError otherwise. */
  request(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<unknown>
}

export interface ClientOptions {
  baseUrl: string
  /** A session token or an sk- key; none sends no credential (the API answers 401 where one is needed). */
  token?: string | undefined
  fetch?: typeof fetch
}

/** A client over global fetch (or the one given). */
export function createClient(options: ClientOptions): Client {
  const doFetch = options.fetch ?? fetch
  return {
    baseUrl: options.baseUrl,
    async request(method, path, body) {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (options.token) headers.authorization = `Bearer ${options.token}`
      if (body !== undefined) headers['content-type'] = 'application/json'
      let res: Response
      try {
        res = await doFetch(`${options.baseUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause
        const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))
        throw new ApiError(null, 'unreachable', `could not reach ${options.baseUrl} (${why})`)
      }
      const text = await res.text()
      let parsed: unknown
      try {
        parsed = text === '' ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      if (res.ok && parsed !== undefined) return parsed
      const envelope = parsed as { error?: unknown; message?: unknown; details?: unknown } | undefined
      if (!res.ok && typeof envelope?.error === 'string') {
        const details = envelope.details && typeof envelope.details === 'object' ? envelope.details : {}
        throw new ApiError(
          res.status,
          envelope.error,
          typeof envelope.message === 'string' ? envelope.message : res.statusText,
          details as Record<string, unknown>,
          parsed,
        )
      }
      // Not Plinth's JSON (a proxy's error page, a wrong URL): say what came back, briefly.
      throw new ApiError(
        res.status,
        'bad_response',
        `${method} ${path} answered ${res.status} ${res.statusText} with ${parsed === undefined ? 'no JSON' : 'unexpected JSON'}`,
        {},
        parsed,
      )
    },
  }
}
