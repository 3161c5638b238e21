import { AppError } from '../../lib/errors.js'

/**
 * Where Plinth may send a browser after sign-in or put in a mailed link: a path on PUBLIC_URL, or a URL on
 * PUBLIC_URL's origin or one of CORS_ORIGINS. Anything else would make Plinth an open redirect that hands
 * session tokens to a stranger. Throws invalid_request.
 */
export function trustedUrl(raw: string, publicUrl: string, trustedOrigins: readonly string[]): string {
  let url: URL
  try {
    url = raw.startsWith('/') && !raw.startsWith('//') ? new URL(raw, publicUrl) : new URL(raw)
  } catch {
    throw new AppError('invalid_request', 'The redirect URL is not a URL')
  }
  const allowed = new Set([new URL(publicUrl).origin, ...trustedOrigins.filter((o) => o !== '*')])
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !allowed.has(url.origin)) {
    throw new AppError('invalid_request', 'The redirect URL is not on a trusted origin (PUBLIC_URL or CORS_ORIGINS)')
  }
  return url.toString()
}

/** Appends values to a URL's fragment, where tokens stay out of server logs and Referer headers. */
export function withFragment(url: string, values: Record<string, string>): string {
  const target = new URL(url)
  const fragment = new URLSearchParams(target.hash.replace(/^#/, ''))
  for (const [k, v] of Object.entries(values)) fragment.set(k, v)
  target.hash = fragment.toString()
  return target.toString()
}

/** Appends values to a URL's query string. */
export function withQuery(url: string, values: Record<string, string>): string {
  const target = new URL(url)
  for (const [k, v] of Object.entries(values)) target.searchParams.set(k, v)
  return target.toString()
}
