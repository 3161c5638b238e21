import type { Context } from 'hono'
import { AppError } from '../../lib/errors.js'
import {
  clientIp,
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
import { bearerToken, sessionOf } from './authenticate.js'
import type { CookieSessions } from './cookie-session.js'
import type { RequestContext } from './context.js'
import {
  CodeBody,
  SessionSchema,
  SignedInSchema,
  SignInEmailBody,
  SignInUsernameBody,
  SignUpBody,
  Success,
  UsernameBody,
} from './schemas.js'
import type { AuthService } from './service.js'

const tags = ['Auth']
const signInErrors = errorResponses('invalid_request', 'unauthorized', 'mfa_required', 'account_banned', 'rate_limited')

const signUp = defineRoute({
  method: 'post',
  path: '/api/auth/sign-up/email',
  operationId: 'auth.signUpEmail',
  summary: 'Create an account and sign in',
  tags,
  permission: null,
  request: jsonBody(SignUpBody),
  responses: {
    200: jsonContent(SignedInSchema, 'Signed up and in'),
    ...errorResponses('invalid_request', 'signup_forbidden', 'already_exists', 'rate_limited'),
  },
})
const signInEmail = defineRoute({
  method: 'post',
  path: '/api/auth/sign-in/email',
  operationId: 'auth.signInEmail',
  summary: 'Sign in with email and password',
  tags,
  permission: null,
  request: jsonBody(SignInEmailBody),
  responses: { 200: jsonContent(SignedInSchema, 'Signed in'), ...signInErrors },
})
const signInUsername = defineRoute({
  method: 'post',
  path: '/api/auth/sign-in/username',
  operationId: 'auth.signInUsername',
  summary: 'Sign in with username and password (when enabled)',
  tags,
  permission: null,
  request: jsonBody(SignInUsernameBody),
  responses: { 200: jsonContent(SignedInSchema, 'Signed in'), ...signInErrors, ...errorResponses('not_found') },
})
const usernameAvailable = defineRoute({
  method: 'post',
  path: '/api/auth/is-username-available',
  operationId: 'auth.isUsernameAvailable',
  summary: 'Whether a username is free',
  tags,
  permission: null,
  request: jsonBody(UsernameBody),
  responses: {
    200: jsonContent(z.object({ available: z.boolean() }), 'Availability'),
    ...errorResponses('invalid_request', 'rate_limited'),
  },
})
const capabilities = defineRoute({
  method: 'get',
  path: '/api/auth/capabilities',
  operationId: 'auth.capabilities',
  summary: 'Sign-in methods this instance offers',
  tags,
  permission: null,
  responses: {
    200: jsonContent(
      z.object({
        usernameEnabled: z.boolean(),
        requireEmail: z.boolean(),
        socialProviders: z.object({ github: z.boolean(), google: z.boolean() }),
        magicLink: z.boolean().openapi({ description: 'Magic links can be sent (an email channel is configured)' }),
        firstRun: z
          .boolean()
          .openapi({ description: 'No account exists yet: the next sign-up makes the owner (super_admin)' }),
      }),
      'Capabilities',
    ),
  },
})
const getSession = defineRoute({
  method: 'get',
  path: '/api/auth/get-session',
  operationId: 'auth.getSession',
  summary: 'The signed-in user and session',
  tags,
  permission: 'authenticated',
  responses: { 200: jsonContent(SessionSchema, 'The session'), ...errorResponses('unauthorized') },
})
const signOut = defineRoute({
  method: 'post',
  path: '/api/auth/sign-out',
  operationId: 'auth.signOut',
  summary: 'End the session',
  tags,
  permission: 'authenticated',
  responses: { 200: jsonContent(Success, 'Signed out'), ...errorResponses('invalid_request', 'unauthorized') },
})
const renewSession = defineRoute({
  method: 'post',
  path: '/api/auth/renew-session',
  operationId: 'auth.renewSession',
  summary: 'Trade this session for a new one (the old one ends)',
  description:
    'For a page that received a session token in its address (a magic link callback): sent with `X-Plinth-Session: cookie`, the new session is set as a cookie and the token that passed through the address bar stops working.',
  tags,
  permission: 'authenticated',
  responses: {
    200: jsonContent(SignedInSchema, 'The new session'),
    ...errorResponses('unauthorized', 'account_banned'),
  },
})
const enrollTotp = defineRoute({
  method: 'post',
  path: '/api/auth/totp/enroll',
  operationId: 'auth.totpEnroll',
  summary: 'Start two-factor enrolment (the secret is shown once)',
  tags,
  permission: 'authenticated',
  responses: {
    200: jsonContent(z.object({ secret: z.string(), uri: z.string() }), 'Scan the URI, then confirm with a code'),
    ...errorResponses('unauthorized', 'forbidden', 'conflict'),
  },
})
const confirmTotp = defineRoute({
  method: 'post',
  path: '/api/auth/totp/confirm',
  operationId: 'auth.totpConfirm',
  summary: 'Turn two-factor on with a code',
  tags,
  permission: 'authenticated',
  request: jsonBody(CodeBody),
  responses: {
    200: jsonContent(z.object({ enabled: z.literal(true) }), 'On'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const disableTotp = defineRoute({
  method: 'post',
  path: '/api/auth/totp/disable',
  operationId: 'auth.totpDisable',
  summary: 'Turn two-factor off with a code',
  tags,
  permission: 'authenticated',
  request: jsonBody(CodeBody),
  responses: {
    200: jsonContent(z.object({ enabled: z.literal(false) }), 'Off'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'rate_limited'),
  },
})

export function requestContext(c: Context<AppEnv>, trustProxy: boolean): RequestContext {
  return { ip: clientIp(c, trustProxy) }
}

/** /api/auth: sign-up, sign-in, the session, sign-out, username availability, capabilities, TOTP. */
export function authRoutes(
  auth: AuthService,
  security: Security,
  options: { trustProxy: boolean; cookies: CookieSessions; sessionTtlSeconds: number },
) {
  const { trustProxy, cookies, sessionTtlSeconds } = options
  const router = createRouter(security)
  const signedIn = <T extends { token: string }>(c: Context<AppEnv>, result: T) =>
    cookies.answer(c, result, sessionTtlSeconds) as T
  const noStore = (c: Context<AppEnv>) => c.header('Cache-Control', 'no-store')
  router.openapi(signUp, async (c) => {
    noStore(c)
    return c.json(signedIn(c, await auth.signUp(c.req.valid('json'), requestContext(c, trustProxy))), 200)
  })
  router.openapi(signInEmail, async (c) => {
    noStore(c)
    return c.json(signedIn(c, await auth.signInEmail(c.req.valid('json'), requestContext(c, trustProxy))), 200)
  })
  router.openapi(signInUsername, async (c) => {
    noStore(c)
    return c.json(signedIn(c, await auth.signInUsername(c.req.valid('json'), requestContext(c, trustProxy))), 200)
  })
  router.openapi(usernameAvailable, async (c) =>
    c.json(
      { available: await auth.usernameAvailable(c.req.valid('json').username, requestContext(c, trustProxy)) },
      200,
    ),
  )
  router.openapi(capabilities, async (c) => c.json(await auth.capabilities(), 200))
  router.openapi(getSession, async (c) => {
    return c.json(await auth.getSession(principalOf(c), sessionOf(c)), 200)
  })
  router.openapi(signOut, async (c) => {
    const token = bearerToken(c) ?? cookies.token(c)
    if (principalOf(c).kind !== 'user' || !token) {
      throw new AppError(
        'invalid_request',
        'Only a session signs out; revoke an API key with DELETE /api/auth/api-keys/{id}',
      )
    }
    await auth.signOut(token)
    cookies.clear(c)
    return c.json({ success: true as const }, 200)
  })
  router.openapi(renewSession, async (c) => {
    noStore(c)
    const token = bearerToken(c) ?? cookies.token(c)
    if (!token) throw new AppError('unauthorized', 'Only a session can be renewed')
    return c.json(signedIn(c, await auth.renewSession(principalOf(c), token, requestContext(c, trustProxy))), 200)
  })
  router.openapi(enrollTotp, async (c) => {
    noStore(c)
    return c.json(await auth.enrollTotp(principalOf(c)), 200)
  })
  router.openapi(confirmTotp, async (c) => {
    await auth.confirmTotp(principalOf(c), c.req.valid('json').code)
    return c.json({ enabled: true as const }, 200)
  })
  router.openapi(disableTotp, async (c) => {
    await auth.disableTotp(principalOf(c), c.req.valid('json').code)
    return c.json({ enabled: false as const }, 200)
  })
  return router
}
