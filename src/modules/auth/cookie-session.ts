import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { safeEqual, sign } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import type { AppEnv } from '../../lib/http/index.js'

/**
 * Cookie sessions for the admin UI (decision 078). A page asks for one by sending `X-Plinth-Session: cookie`
 * with a sign-in; the session token then travels only in an HttpOnly, SameSite=Strict cookie (script on the
 * page can use the session but never read it), and a second, readable cookie carries the CSRF token the page
 * echoes in `X-CSRF-Token` on every unsafe request. The CSRF token is an HMAC of the session token, so it
 * cannot be forged without the server's key nor turned back into the token.
 */
export const sessionCookie = 'plinth_session'
export const csrfCookie = 'plinth_csrf'
const modeHeader = 'x-plinth-session'
const csrfHeader = 'x-csrf-token'
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface CookieSessions {
  /**
   * The answer of a sign-in: in cookie mode the token is set as cookies and left out of the body; otherwise
   * the body as it is.
   */
  answer<T extends { token: string }>(c: Context<AppEnv>, signedIn: T, maxAgeSeconds: number): T | Omit<T, 'token'>
  /** The cookie's session token, or null; checks the request's origin and, for unsafe methods, its CSRF token. */
  token(c: Context<AppEnv>): string | null
  /** Removes both cookies (sign-out). */
  clear(c: Context<AppEnv>): void
}

function header(c: Context<AppEnv>, name: string): string | undefined {
  const incoming = c.env?.incoming
  const raw = incoming ? incoming.headers[name] : c.req.header(name)
  return Array.isArray(raw) ? raw[0] : raw
}

export function createCookieSessions(options: {
  secretKey: string
  trustProxy: boolean
  /** Origins besides the request's own whose pages may use a cookie session (PUBLIC_URL, CORS_ORIGINS). */
  trustedOrigins: readonly string[]
}): CookieSessions {
  const csrfOf = (token: string) => sign(options.secretKey, 'csrf', token)
  const secure = (c: Context<AppEnv>) =>
    new URL(c.req.url).protocol === 'https:' ||
    (options.trustProxy && header(c, 'x-forwarded-proto')?.split(',')[0]?.trim() === 'https')

  /** A browser names the page's origin on cross-origin requests and on every unsafe one: it must be ours. */
  function checkOrigin(c: Context<AppEnv>): void {
    const refuse = () => new AppError('forbidden', 'A cookie session is only accepted from its own site')
    if (header(c, 'sec-fetch-site') === 'cross-site') throw refuse()
    const origin = header(c, 'origin')
    if (origin === undefined) return
    const host = header(c, 'host')
    const own = host ? [`http://${host}`, `https://${host}`] : []
    if (own.includes(origin) || options.trustedOrigins.includes(origin)) return
    throw refuse()
  }

  return {
    answer(c, signedIn, maxAgeSeconds) {
      if (header(c, modeHeader) !== 'cookie') return signedIn
      const base = { path: '/', sameSite: 'Strict' as const, secure: secure(c), maxAge: maxAgeSeconds }
      setCookie(c, sessionCookie, signedIn.token, { ...base, httpOnly: true })
      setCookie(c, csrfCookie, csrfOf(signedIn.token), base)
      const { token: _token, ...rest } = signedIn
      return rest
    },

    token(c) {
      const token = getCookie(c, sessionCookie)
      if (!token) return null
      checkOrigin(c)
      if (!safeMethods.has(c.req.method)) {
        const sent = header(c, csrfHeader)
        if (!sent || !safeEqual(sent, csrfOf(token)))
          throw new AppError('forbidden', 'A cookie session must send its X-CSRF-Token with this request')
      }
      return token
    },

    clear(c) {
      deleteCookie(c, sessionCookie, { path: '/', secure: secure(c) })
      deleteCookie(c, csrfCookie, { path: '/', secure: secure(c) })
    },
  }
}
