import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import type { CookieSessions } from './cookie-session.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
  type AppEnv,
  type Security,
} from '../../lib/http/index.js'
import type { Recovery } from './recovery.js'
import { requestContext } from './routes.js'
import { MagicLinkBody, ResetBody, ResetRequestBody, SecondFactorBody, SignedInSchema, Status } from './schemas.js'
import { resetPage } from './reset-page.js'
import type { Social } from './social.js'
import { trustedUrl, withFragment } from './trusted-urls.js'

const tags = ['Auth']
const redirect = { 302: { description: 'Redirect (Location header)' } }
// Binds a social sign-in attempt to the browser that started it (login CSRF).
const browserCookie = 'plinth_oauth'

const requestReset = defineRoute({
  method: 'post',
  path: '/api/auth/request-password-reset',
  operationId: 'auth.requestPasswordReset',
  summary: 'Mail a reset link (always answers status true)',
  tags,
  permission: null,
  request: jsonBody(ResetRequestBody),
  responses: { 200: jsonContent(Status, 'Accepted'), ...errorResponses('invalid_request', 'rate_limited') },
})
const resetPassword = defineRoute({
  method: 'post',
  path: '/api/auth/reset-password',
  operationId: 'auth.resetPassword',
  summary: 'Set a new password with a reset token (once, within an hour)',
  tags,
  permission: null,
  request: jsonBody(ResetBody),
  responses: {
    200: jsonContent(Status, 'Password changed; every session of the account ended'),
    ...errorResponses('invalid_request'),
  },
})
const resetForm = defineRoute({
  method: 'get',
  path: '/api/auth/reset-password',
  operationId: 'auth.resetPasswordPage',
  summary: 'A minimal page that completes a mailed reset link',
  tags,
  permission: null,
  request: { query: z.object({ token: z.string().max(200).optional() }) },
  responses: { 200: { description: 'HTML form', content: { 'text/html': { schema: z.string() } } } },
})
const resetLink = defineRoute({
  method: 'post',
  path: '/api/v1/users/{id}/reset-link',
  operationId: 'users.resetLink',
  summary: 'Issue a one-time password-reset link (1 hour; audit-logged)',
  tags: ['Users'],
  permission: 'system/users:update',
  request: { params: z.object({ id: z.string().min(1).max(64) }) },
  responses: {
    200: jsonContent(z.object({ url: z.string(), expiresAt: z.number().int() }), 'The link'),
    ...errorResponses('unauthorized', 'forbidden', 'not_found'),
  },
})
const magicLink = defineRoute({
  method: 'post',
  path: '/api/auth/magic-link',
  operationId: 'auth.magicLink',
  summary: 'Mail a 15-minute sign-in link (always answers status true)',
  tags,
  permission: null,
  request: jsonBody(MagicLinkBody),
  responses: { 200: jsonContent(Status, 'Accepted'), ...errorResponses('invalid_request', 'rate_limited') },
})
const verifyMagicLink = defineRoute({
  method: 'get',
  path: '/api/auth/magic-link/verify',
  operationId: 'auth.magicLinkVerify',
  summary: 'Sign in with a magic link',
  tags,
  permission: null,
  request: {
    query: z.object({
      token: z.string().min(1).max(200),
      callbackURL: z.string().max(2000).optional(),
      code: z
        .string()
        .regex(/^\d{6}$/)
        .optional(),
    }),
  },
  responses: {
    200: jsonContent(SignedInSchema, 'Signed in (no callbackURL)'),
    ...redirect,
    ...errorResponses('invalid_request', 'unauthorized', 'mfa_required', 'account_banned', 'rate_limited'),
  },
})
const secondFactor = defineRoute({
  method: 'post',
  path: '/api/auth/two-factor/verify',
  operationId: 'auth.twoFactorVerify',
  summary: 'Finish a social sign-in that asked for the TOTP code',
  tags,
  permission: null,
  request: jsonBody(SecondFactorBody),
  responses: {
    200: jsonContent(SignedInSchema, 'Signed in'),
    ...errorResponses('invalid_request', 'unauthorized', 'mfa_required', 'rate_limited'),
  },
})
const socialStart = defineRoute({
  method: 'get',
  path: '/api/auth/sign-in/social',
  operationId: 'auth.signInSocial',
  summary: 'Redirect to GitHub or Google',
  tags,
  permission: null,
  request: { query: z.object({ provider: z.string().max(30), callbackURL: z.string().max(2000) }) },
  responses: { ...redirect, ...errorResponses('invalid_request') },
})
const socialCallback = defineRoute({
  method: 'get',
  path: '/api/auth/callback/{provider}',
  operationId: 'auth.socialCallback',
  summary: 'Where the provider sends the browser back',
  tags,
  permission: null,
  request: {
    params: z.object({ provider: z.string().max(30) }),
    query: z.object({
      code: z.string().max(2000).optional(),
      state: z.string().max(200).optional(),
      error: z.string().max(200).optional(),
    }),
  },
  responses: { ...redirect, ...errorResponses('invalid_request') },
})

/** Password recovery, magic links and social sign-in. */
export function recoveryRoutes(
  recovery: Recovery,
  social: Social,
  security: Security,
  trust: { trustProxy: boolean; publicUrl: string; trustedOrigins: readonly string[] },
  session: { cookies: CookieSessions; sessionTtlSeconds: number },
) {
  const router = createRouter(security)
  const answer = <T extends { token: string }>(c: Context<AppEnv>, result: T) =>
    session.cookies.answer(c, result, session.sessionTtlSeconds) as T
  const ctx = (c: Parameters<typeof requestContext>[0]) => requestContext(c, trust.trustProxy)
  router.openapi(requestReset, async (c) => {
    await recovery.requestPasswordReset(c.req.valid('json'), ctx(c))
    return c.json({ status: true as const }, 200)
  })
  router.openapi(resetPassword, async (c) => {
    await recovery.resetPassword(c.req.valid('json'), ctx(c))
    return c.json({ status: true as const }, 200)
  })
  router.openapi(resetForm, (c) => {
    c.header('Cache-Control', 'no-store')
    c.header('Referrer-Policy', 'no-referrer')
    c.header(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
    )
    return c.html(resetPage(), 200)
  })
  router.openapi(resetLink, async (c) => {
    const p = principalOf(c)
    c.header('Cache-Control', 'no-store')
    return c.json(await recovery.issueResetLink(p, c.req.valid('param').id, ctx(c)), 200)
  })
  router.openapi(magicLink, async (c) => {
    await recovery.requestMagicLink(c.req.valid('json'), ctx(c))
    return c.json({ status: true as const }, 200)
  })
  router.openapi(verifyMagicLink, async (c) => {
    const query = c.req.valid('query')
    const callback = query.callbackURL ? trustedUrl(query.callbackURL, trust.publicUrl, trust.trustedOrigins) : null
    const signedIn = await recovery.verifyMagicLink(query, ctx(c))
    c.header('Cache-Control', 'no-store')
    if (callback) return c.redirect(withFragment(callback, { token: signedIn.token }), 302)
    return c.json(answer(c, signedIn), 200)
  })
  router.openapi(secondFactor, async (c) => {
    c.header('Cache-Control', 'no-store')
    return c.json(answer(c, await social.completeSecondFactor(c.req.valid('json'), ctx(c))), 200)
  })
  router.openapi(socialStart, async (c) => {
    const { provider, callbackURL } = c.req.valid('query')
    const started = await social.start(provider, callbackURL)
    setCookie(c, browserCookie, started.browserNonce, {
      httpOnly: true,
      sameSite: 'Lax', // sent on the provider's top-level redirect back, not on cross-site subrequests
      secure: trust.publicUrl.startsWith('https:'),
      path: '/api/auth/callback',
      maxAge: started.ttlSeconds,
    })
    return c.redirect(started.url, 302)
  })
  router.openapi(socialCallback, async (c) => {
    c.header('Cache-Control', 'no-store')
    const nonce = getCookie(c, browserCookie) ?? null
    deleteCookie(c, browserCookie, { path: '/api/auth/callback' })
    return c.redirect(await social.callback(c.req.valid('param').provider, c.req.valid('query'), nonce, ctx(c)), 302)
  })
  return router
}
