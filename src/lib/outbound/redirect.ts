import { isCredentialHeader } from '../credential-headers.js'
import { OutboundError } from './errors.js'

/** One request on the wire: what a hop sends. Header names are lower case. */
export interface Hop {
  readonly url: URL
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | null
}

/** The statuses that are followed; others (300, 304…) are answered as they are. */
const followed = new Set([301, 302, 303, 307, 308])

/** Headers that describe a body, dropped with it when a redirect turns the request into a GET. */
const bodyHeaders = ['content-type', 'content-encoding', 'content-language', 'content-location']

/** Credentials that never follow a redirect to another origin: these, every header isCredentialHeader names, and those the caller names. */
export const credentialHeaders = ['authorization', 'cookie', 'proxy-authorization']

/**
 * Parses and checks a URL to request: absolute, http or https, with a host and without a user name or
 * password (those would be sent as Basic credentials, and leak into every log that prints the URL).
 * @throws OutboundError `bad_url`; the message never quotes the URL.
 */
export function parseOutboundUrl(input: string | URL, base?: URL): URL {
  let url: URL
  try {
    url = new URL(input, base)
  } catch {
    throw new OutboundError(
      'bad_url',
      base ? 'The redirect location is not a valid URL' : 'The URL is not a valid absolute URL',
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('bad_url', 'Only http and https URLs can be requested')
  if (url.username !== '' || url.password !== '')
    throw new OutboundError('bad_url', 'A URL may not carry a user name or password; send credentials in a header')
  if (url.hostname === '') throw new OutboundError('bad_url', 'The URL has no host')
  return url
}

/**
 * The request a redirect answer leads to, or null when the answer is not one to follow (not a 301, 302,
 * 303, 307 or 308, or no Location). 301/302/303 become a GET without body (HEAD stays HEAD); 307/308
 * repeat the method and body. Going to another origin (scheme, host or port) drops the credential
 * headers, since they were meant for the first.
 * @throws OutboundError `bad_url` for a Location that is not a valid http(s) URL without credentials.
 */
export function redirectHop(
  hop: Hop,
  status: number,
  location: string | undefined,
  extraCredentialHeaders: readonly string[] = [],
): Hop | null {
  if (!followed.has(status) || location === undefined) return null
  const url = parseOutboundUrl(location, hop.url)
  let { method, body } = hop
  const headers: Record<string, string> = { ...hop.headers }
  if (status !== 307 && status !== 308 && method !== 'HEAD') {
    method = 'GET'
    body = null
    for (const name of bodyHeaders) delete headers[name]
  }
  if (url.origin !== hop.url.origin) {
    for (const name of [...credentialHeaders, ...extraCredentialHeaders]) delete headers[name.toLowerCase()]
    for (const name of Object.keys(headers)) if (isCredentialHeader(name)) delete headers[name]
  }
  return { url, method, headers, body }
}
