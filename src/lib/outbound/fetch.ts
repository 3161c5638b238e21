import { isIP } from 'node:net'
import { JsonTooLarge, parseJsonBounded } from '../json-bounds.js'
import { isBlockedAddress, isLoopbackName } from './address.js'
import { isOutboundError, OutboundError } from './errors.js'
import { createGuardedLookup, isBlockedAddressError, type Resolver, type SocketLookup } from './lookup.js'
import { parseOutboundUrl, redirectHop, type Hop } from './redirect.js'
import { openHop, readBody } from './request.js'

/** What a client is allowed to reach, fixed for the client's life (set from config). */
export interface OutboundOptions {
  /** ALLOW_PRIVATE_NETWORK: when true, no address is refused. */
  allowPrivateNetwork: boolean
  /** The resolver (`dns.lookup` by default). Tests answer for made-up names with it. */
  resolve?: Resolver
  /**
   * The address rule (lib/outbound's `isBlockedAddress` by default), given the address and the host name
   * it was resolved for (or the literal). Tests narrow it to let one made-up host through; nothing else should.
   */
  isBlocked?: (address: string, host: string) => boolean
}

/** One request; every field optional. Header names are case-insensitive. */
export interface OutboundInit {
  /** GET by default; any HTTP token except CONNECT, TRACE and TRACK. */
  method?: string
  headers?: Headers | Record<string, string> | [string, string][]
  /** Sent as it is (a string as UTF-8); kept in memory so a 307/308 redirect can send it again. */
  body?: string | Uint8Array | null
  /** Aborts the request: rejects with `aborted`, or `timeout` when the reason is a TimeoutError. */
  signal?: AbortSignal
  /** Resolving, connecting and the TLS handshake, per hop. Default 5,000 ms (never more than `timeoutMs`). */
  connectTimeoutMs?: number
  /** The whole exchange, every redirect and the body included. Default 10,000 ms. */
  timeoutMs?: number
  /** The largest body accepted, decoded. Default 10 MiB. */
  maxResponseBytes?: number
  /** `follow` (default) follows up to `maxRedirects`; `manual` answers a redirect as it is. */
  redirect?: 'follow' | 'manual'
  /** Default 5. One more is `too_many_redirects`. */
  maxRedirects?: number
  /** Header names besides Authorization, Cookie and Proxy-Authorization that hold credentials (an API-key header). */
  credentialHeaders?: readonly string[]
}

/** The answer, read in full: the total timeout covers the body, and no caller is left holding a socket. */
export interface OutboundResponse {
  /** The URL that answered (after redirects). */
  readonly url: string
  readonly status: number
  readonly statusText: string
  readonly headers: Headers
  readonly redirected: boolean
  /** The body bytes, decoded from gzip, deflate or br. Empty for HEAD, 204 and 304. */
  readonly body: Uint8Array
  text(): string
  /** @throws SyntaxError when the body is not JSON; OutboundError too_large when it holds over 1,000,000 values (lib/json-bounds). */
  json(): unknown
}

export interface OutboundClient {
  /** outboundFetch with this client's options. */
  fetch(url: string | URL, init?: OutboundInit): Promise<OutboundResponse>
  /**
   * The same address rule for clients that open their own sockets (the AWS SDK of flows' s3_action):
   * `lookup` for their agents (undefined: the system resolver, nothing refused) and `refusesHost` for the
   * literal addresses and loopback names a lookup never sees.
   */
  sockets(): OutboundSockets
}

/** What a client with its own sockets needs to keep the outbound-address rule (OutboundClient.sockets). */
export interface OutboundSockets {
  readonly lookup: SocketLookup | undefined
  refusesHost(hostname: string): boolean
}

export const outboundDefaults = {
  connectTimeoutMs: 5_000,
  timeoutMs: 10_000,
  maxResponseBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
} as const

/** A client bound to the instance's outbound options (one per app, from config). */
export function createOutboundClient(options: OutboundOptions): OutboundClient {
  const isBlocked = options.isBlocked ?? ((address: string) => isBlockedAddress(address))
  const resolve = options.resolve ? { resolve: options.resolve } : {}
  const lookup = options.allowPrivateNetwork
    ? options.resolve && createGuardedLookup({ ...resolve, isBlocked: () => false })
    : createGuardedLookup({ ...resolve, isBlocked })
  return {
    fetch: (url, init) => outboundFetch(url, init, options),
    sockets: () => ({
      lookup,
      refusesHost: (hostname) => !options.allowPrivateNetwork && isRefusedHost(hostname, isBlocked),
    }),
  }
}

// Set by the client from the body and the connection; a caller's value would contradict them.
const managedHeaders = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
])
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * A fetch for requests made on a caller's behalf (flows' http_request, graphql_request, webhook_dispatch,
 * scripts' fetch): unless `allowPrivateNetwork`, every hop's host is checked against the outbound-address
 * policy, a literal address before connecting and a name in the socket's own lookup (so the address
 * checked is the address connected to); redirects are followed here, hop by hop, under the same check.
 * @throws OutboundError with a code (`bad_url`, `bad_request`, `blocked_address`, `timeout`, `aborted`,
 * `too_large`, `too_many_redirects`, `network`); never a message quoting the URL's path, query or a header.
 */
export async function outboundFetch(
  input: string | URL,
  init: OutboundInit = {},
  options: OutboundOptions,
): Promise<OutboundResponse> {
  const timeoutMs = init.timeoutMs ?? outboundDefaults.timeoutMs
  const connectTimeoutMs = Math.min(init.connectTimeoutMs ?? outboundDefaults.connectTimeoutMs, timeoutMs)
  const maxRedirects = init.maxRedirects ?? outboundDefaults.maxRedirects
  const maxResponseBytes = init.maxResponseBytes ?? outboundDefaults.maxResponseBytes
  if (
    ![timeoutMs, connectTimeoutMs, maxResponseBytes].every((n) => Number.isFinite(n) && n > 0) ||
    !(Number.isInteger(maxRedirects) && maxRedirects >= 0)
  ) {
    throw new OutboundError(
      'bad_request',
      'Timeouts and the size limit must be positive numbers, maxRedirects a whole number from 0',
    )
  }
  let hop = firstHop(input, init)
  const deadline = new AbortController()
  const timer = setTimeout(
    () => deadline.abort(new OutboundError('timeout', `No complete response within ${timeoutMs} ms`)),
    timeoutMs,
  )
  const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal
  const isBlocked = options.isBlocked ?? ((address: string) => isBlockedAddress(address))
  const resolve = options.resolve ? { resolve: options.resolve } : {}
  const lookup = options.allowPrivateNetwork
    ? options.resolve && createGuardedLookup({ ...resolve, isBlocked: () => false })
    : createGuardedLookup({ ...resolve, isBlocked })
  try {
    for (let redirects = 0; ; redirects++) {
      if (!options.allowPrivateNetwork && isRefusedHost(hop.url.hostname, isBlocked)) throw blocked(hop.url.hostname)
      const open = await openHop(hop, { lookup, signal, connectTimeoutMs })
      const { res } = open
      const status = res.statusCode ?? 0
      let next: Hop | null
      try {
        next =
          init.redirect === 'manual' ? null : redirectHop(hop, status, res.headers.location, init.credentialHeaders)
      } catch (err) {
        open.req.destroy()
        throw err
      }
      if (next) {
        open.req.destroy()
        if (redirects >= maxRedirects)
          throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects`)
        hop = next
        continue
      }
      const body = await readBody(open, maxResponseBytes)
      return response(hop.url, status, res.statusMessage ?? '', res.rawHeaders, redirects > 0, body)
    }
  } catch (err) {
    throw outboundErrorOf(err, signal, hop.url.hostname)
  } finally {
    clearTimeout(timer)
  }
}

function firstHop(input: string | URL, init: OutboundInit): Hop {
  const url = parseOutboundUrl(input)
  const method = (init.method ?? 'GET').toUpperCase()
  if (!token.test(method) || ['CONNECT', 'TRACE', 'TRACK'].includes(method))
    throw new OutboundError('bad_request', 'The method is not one that can be sent')
  let given: Headers
  try {
    given = new Headers(init.headers)
  } catch {
    // Headers' own message quotes the value, which may be a credential.
    throw new OutboundError('bad_request', 'A header name or value is not valid')
  }
  const headers: Record<string, string> = {
    accept: '*/*',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': 'Plinth',
  }
  for (const [name, value] of given) if (!managedHeaders.has(name) && !name.startsWith('proxy-')) headers[name] = value
  const body =
    init.body === undefined || init.body === null
      ? null
      : typeof init.body === 'string'
        ? Buffer.from(init.body, 'utf8')
        : init.body
  return { url, method, headers, body }
}

/**
 * True when a URL host is refused before any connection: a loopback name, or an address literal the
 * rule refuses (the URL parser has already turned `2130706433` or `0x7f.1` into `127.0.0.1`). Sockets do
 * not look literals up, so the lookup's check would never see them.
 */
function isRefusedHost(hostname: string, isBlocked: (address: string, host: string) => boolean): boolean {
  if (isLoopbackName(hostname)) return true
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  return isIP(bare) !== 0 && isBlocked(bare, hostname)
}

function blocked(host: string): OutboundError {
  return new OutboundError(
    'blocked_address',
    `Refused: ${host} is, or resolves to, a loopback, private or link-local address (ALLOW_PRIVATE_NETWORK is off)`,
  )
}

/** Whatever the sockets threw, as an OutboundError; the abort reason decides first, since it caused the rest. */
function outboundErrorOf(err: unknown, signal: AbortSignal, host: string): OutboundError {
  if (isOutboundError(err)) return err
  if (signal.aborted) {
    const reason: unknown = signal.reason
    if (isOutboundError(reason)) return reason
    if (reason instanceof Error && reason.name === 'TimeoutError')
      return new OutboundError('timeout', 'The request timed out')
    return new OutboundError('aborted', 'The request was aborted')
  }
  if (isBlockedAddressError(err)) return blocked(host)
  const code = typeof (err as { code?: unknown } | null)?.code === 'string' ? (err as { code: string }).code : null
  return new OutboundError('network', `Could not complete the request to ${host}${code ? ` (${code})` : ''}`, code)
}

function response(
  url: URL,
  status: number,
  statusText: string,
  rawHeaders: string[],
  redirected: boolean,
  body: Buffer,
): OutboundResponse {
  const headers = new Headers()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    try {
      headers.append(rawHeaders[i]!, rawHeaders[i + 1]!)
    } catch {
      // A header the Headers class will not hold (Node's parser is more lenient); the rest still count.
    }
  }
  return {
    url: url.href,
    status,
    statusText,
    headers,
    redirected,
    body,
    text: () => body.toString('utf8'),
    json: () => {
      try {
        return parseJsonBounded(body.toString('utf8'))
      } catch (err) {
        // Parsed JSON can take 40× its text in memory: the value count is bounded, not only the bytes.
        if (err instanceof JsonTooLarge)
          throw new OutboundError('too_large', `The response from ${url.host}: ${err.message}`)
        throw err
      }
    },
  }
}
