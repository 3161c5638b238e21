import { z } from 'zod'
import { isOutboundError } from '../../../lib/outbound/index.js'
import { headers, headersObject, hasHeader, send, stepErrorOf, timeoutMs, url } from '../outbound-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const

// Credentials: masked in step logs, exports and flow reads (flows/masking.ts: auth.token, auth.password).
const auth = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('bearer'), token: text(8_192, 1).describe('The bearer token') }),
    z.strictObject({ type: z.literal('basic'), username: text(1_000), password: text(8_192) }),
    z.strictObject({
      type: z.literal('api_key'),
      header: z
        .string()
        .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$/, 'must be an HTTP header name')
        .default('X-API-Key')
        .describe('The header carrying the key'),
      token: text(8_192, 1).describe('The key'),
    }),
  ])
  .describe('Credentials: bearer (token), basic (username, password) or api_key (header, token)')

export type HttpAuth = z.output<typeof auth>

/** The auth object as request headers, and the header names that hold credentials (dropped on a redirect to another origin). */
export function authHeaders(given: HttpAuth | undefined): {
  headers: Record<string, string>
  credentialHeaders: string[]
} {
  if (!given) return { headers: {}, credentialHeaders: [] }
  switch (given.type) {
    case 'bearer':
      return { headers: { authorization: `Bearer ${given.token}` }, credentialHeaders: [] }
    case 'basic':
      return {
        headers: {
          authorization: `Basic ${Buffer.from(`${given.username}:${given.password}`, 'utf8').toString('base64')}`,
        },
        credentialHeaders: [],
      }
    case 'api_key':
      return { headers: { [given.header]: given.token }, credentialHeaders: [given.header] }
  }
}

/**
 * Sends one HTTP request through lib/outbound (private addresses refused on every hop, redirects followed
 * under the same rule, credentials dropped on a change of origin) and outputs the answer whatever its
 * status: a flow decides what a 404 means (a condition on `status`, or throw_error).
 */
export const httpRequest = defineOperation({
  type: 'http_request',
  category: 'network',
  label: 'HTTP request',
  description:
    'Sends an HTTP request (auth bearer, basic or api_key; body objects as JSON); output { status, statusText, headers, body, durationMs }. Private and internal addresses are refused.',
  effects: 'writes',
  configSchema: z.strictObject({
    url: url(),
    method: z.enum(methods).default('GET').describe('The HTTP method'),
    headers: headers().optional(),
    body: z.unknown().optional().describe('The body: a string as it is, anything else as JSON'),
    responseType: z
      .enum(['json', 'text', 'binary'])
      .default('json')
      .describe('How to read the response body: json (text when it is not JSON), text, or binary (base64)'),
    timeout_ms: timeoutMs(),
    auth: auth.optional(),
  }),
  async run(config, ctx) {
    const requestHeaders: Record<string, string> = { ...config.headers }
    let body: string | undefined
    if (config.body !== undefined && config.body !== null && config.method !== 'GET' && config.method !== 'HEAD') {
      body = typeof config.body === 'string' ? config.body : JSON.stringify(config.body)
      if (typeof config.body !== 'string' && !hasHeader(requestHeaders, 'content-type'))
        requestHeaders['content-type'] = 'application/json'
    }
    const credentials = authHeaders(config.auth)
    const started = performance.now() // a duration, not a time of day: the run's clock may be a test's
    const res = await send(ctx, config.url, {
      method: config.method,
      headers: { ...requestHeaders, ...credentials.headers },
      ...(body === undefined ? {} : { body }),
      timeoutMs: config.timeout_ms,
      credentialHeaders: credentials.credentialHeaders,
    })
    const durationMs = Math.round(performance.now() - started)
    return {
      status: res.status,
      statusText: res.statusText,
      headers: headersObject(res.headers),
      body: readBody(res, config.responseType, ctx),
      durationMs,
    }
  },
})

/** The body as the step's responseType asks: JSON (its text when it does not parse, with a warning), text, or base64. */
function readBody(
  res: { body: Uint8Array; text(): string; json(): unknown },
  responseType: 'json' | 'text' | 'binary',
  ctx: { log(line: { level: 'warn'; message: string }): void },
): unknown {
  if (responseType === 'binary') return Buffer.from(res.body).toString('base64')
  const raw = res.text()
  if (responseType === 'text') return raw
  if (raw.trim() === '') return null
  try {
    return res.json()
  } catch (err) {
    if (isOutboundError(err)) throw stepErrorOf(err)
    ctx.log({ level: 'warn', message: 'The response body is not JSON; it is given as text' })
    return raw
  }
}
