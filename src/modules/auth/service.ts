import { burnPasswordCheck, verifyPassword, hashPassword } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import { requirePerson, type Principal } from '../../lib/principal.js'
import { username as usernameSchema, type UserRow } from '../users/index.js'
import type { AuthContext, RequestContext, SignedIn } from './context.js'
import type { ActiveSession } from './sessions.js'
import { checkTotp, newTotpSecret, totpUri } from './totp.js'

const invalidCredentials = () => new AppError('unauthorized', 'Invalid credentials')

/** Sign-up, sign-in, sign-out, the session, and the second factor. */
export function createAuthService(auth: AuthContext) {
  const { deps } = auth
  const { users, sessions, clock } = deps

  async function signInWith(
    find: () => Promise<UserRow | null>,
    password: string,
    code: string | undefined,
    method: string,
    ctx: RequestContext,
  ): Promise<SignedIn> {
    await auth.limit('auth', ctx)
    const user = await find()
    if (!user || !user.password_hash) {
      // Unknown accounts pay for a hash too, so timing tells nobody which accounts exist.
      await burnPasswordCheck(password, deps.passwordIterations)
      await deps.audit.record({
        projectId: deps.defaultProjectId,
        action: 'user.sign_in_failed',
        actor: null,
        ip: ctx.ip,
        details: { method, reason: 'credentials' },
      })
      throw invalidCredentials()
    }
    const check = await verifyPassword(password, user.password_hash, deps.passwordIterations)
    const fail = async (reason: string) =>
      deps.audit.record({
        projectId: user.project_id,
        action: 'user.sign_in_failed',
        actor: null,
        actorUserId: user.id,
        target: { type: 'user', id: user.id },
        ip: ctx.ip,
        details: { method, reason },
      })
    if (!check.ok) {
      await fail('credentials')
      throw invalidCredentials()
    }
    if (user.banned) {
      await fail('banned')
      throw new AppError('account_banned', 'This account has been banned')
    }
    try {
      await auth.checkSecondFactor(user, code)
    } catch (err) {
      await fail(err instanceof AppError && err.code === 'mfa_required' ? 'mfa_required' : 'second_factor')
      throw err
    }
    await users.recordSignIn(
      user.id,
      check.needsRehash ? await hashPassword(password, deps.passwordIterations) : undefined,
    )
    return auth.issueSession(user, method, ctx)
  }

  return {
    /**
     * Creates an account in the default project and signs it in. The install's first account becomes its
     * super_admin; later ones need the public role's system/users:create. Throws rate_limited,
     * signup_forbidden, already_exists.
     */
    async signUp(input: { email: string; password: string; name: string }, ctx: RequestContext): Promise<SignedIn> {
      await auth.limit('auth', ctx)
      const open = await auth.signUpOpen()
      const row = await users.signUp(deps.defaultProjectId, input, open)
      await deps.audit.record({
        projectId: row.project_id,
        action: 'user.sign_up',
        actor: null,
        actorUserId: row.id,
        target: { type: 'user', id: row.id },
        ip: ctx.ip,
      })
      return auth.issueSession(row, 'sign_up', ctx)
    },

    /** Email and password (and the TOTP code when enrolled). One generic 401 for any wrong credential. */
    signInEmail(input: { email: string; password: string; code?: string }, ctx: RequestContext): Promise<SignedIn> {
      return signInWith(
        async () => {
          // A shared contact address names several accounts: those sign in by username.
          const rows = await users.findRowsByEmail(input.email)
          return rows.length === 1 ? rows[0]! : null
        },
        input.password,
        input.code,
        'email',
        ctx,
      )
    },

    /** Username and password; not_found while username sign-in is disabled in settings. */
    async signInUsername(
      input: { username: string; password: string; code?: string },
      ctx: RequestContext,
    ): Promise<SignedIn> {
      if (!(await deps.settings.get(deps.defaultProjectId, 'auth.usernameEnabled'))) {
        throw new AppError('not_found', 'Username sign-in is not enabled')
      }
      return signInWith(() => users.findRowByUsername(input.username), input.password, input.code, 'username', ctx)
    },

    /** Ends the caller's session. */
    async signOut(token: string): Promise<void> {
      await sessions.revoke(token)
    },

    /**
     * Trades the caller's session for a new one and ends the old (decision 078): a page that received a
     * token in its address (a magic link's callback) keeps the new one in a cookie, and the token that
     * passed through the address bar and history stops working. Throws unauthorized for anything but a
     * session, account_banned.
     */
    async renewSession(principal: Principal, token: string, ctx: RequestContext): Promise<SignedIn> {
      if (principal.kind !== 'user' || principal.apiKeyId || !principal.userId)
        throw new AppError('unauthorized', 'Only a session can be renewed')
      const user = await users.findRow(principal.userId)
      if (!user) throw new AppError('unauthorized', 'Invalid or expired session')
      if (user.banned) throw new AppError('account_banned', 'This account has been banned')
      const renewed = await auth.issueSession(user, 'session_renewal', ctx)
      await sessions.revoke(token)
      return renewed
    },

    /**
     * The signed-in user and their session. Throws unauthorized for anything but a session. Username and
     * two-factor are read fresh (not kept with the cached session): an account screen shows what is so now.
     */
    async getSession(
      principal: Principal,
      session: ActiveSession | null,
    ): Promise<{
      user: {
        id: string
        email: string | null
        name: string
        role: string
        projectId: string
        username: string | null
        totpEnabled: boolean
      }
      session: { id: string; expiresAt: number }
    }> {
      if (principal.kind !== 'user' || !session) throw new AppError('unauthorized', 'get-session needs a session token')
      const row = await users.findRow(session.userId)
      return {
        user: {
          id: session.userId,
          email: session.email,
          name: session.name,
          role: principal.roleName,
          projectId: session.projectId,
          username: row?.username ?? null,
          totpEnabled: Boolean(row?.totp_enabled),
        },
        session: { id: session.id, expiresAt: session.expiresAt },
      }
    },

    /** Whether a username is free; malformed names are not. Shares the sign-in rate limit. */
    async usernameAvailable(name: string, ctx: RequestContext): Promise<boolean> {
      await auth.limit('auth', ctx)
      if (!usernameSchema.safeParse(name).success) return false
      return users.usernameAvailable(name)
    },

    /** What a sign-in page needs to know before anyone signs in. */
    async capabilities(): Promise<{
      usernameEnabled: boolean
      requireEmail: boolean
      socialProviders: { github: boolean; google: boolean }
      magicLink: boolean
      firstRun: boolean
    }> {
      const settings = await deps.settings.all(deps.defaultProjectId)
      return {
        usernameEnabled: settings['auth.usernameEnabled'],
        requireEmail: settings['auth.requireEmail'],
        socialProviders: { github: deps.oauth.github !== null, google: deps.oauth.google !== null },
        // Magic links need a way to send mail; the first sign-up makes the owner (what a setup screen offers).
        magicLink: deps.mailer.channel !== 'email_no_channel',
        firstRun: !(await deps.users.hasAnyUser()),
      }
    },

    /** Starts TOTP enrolment: a new secret (shown once), not active until confirmed. Throws conflict when active. */
    async enrollTotp(principal: Principal): Promise<{ secret: string; uri: string }> {
      const user = await requireAccount(principal)
      if (user.totp_enabled) throw new AppError('conflict', 'Two-factor authentication is already on; disable it first')
      const secret = newTotpSecret()
      await users.setTotp(user.id, deps.totpBox.seal(secret), false)
      return { secret, uri: totpUri(secret, user.email ?? user.username ?? user.id, 'Plinth') }
    },

    /** Activates TOTP with a code from the app. Throws invalid_request (no enrolment, wrong code). */
    async confirmTotp(principal: Principal, code: string): Promise<void> {
      const user = await requireAccount(principal)
      if (user.totp_enabled || !user.totp_secret) throw new AppError('invalid_request', 'Start enrolment first')
      if (checkTotp(deps.totpBox.open(user.totp_secret), code, clock.now(), null) === null)
        throw new AppError('invalid_request', 'Invalid code')
      await users.setTotp(user.id, user.totp_secret, true)
      await deps.audit.record({
        projectId: user.project_id,
        action: 'user.totp_enabled',
        actor: principal,
        target: { type: 'user', id: user.id },
      })
    },

    /** Turns TOTP off with a current code. Throws invalid_request (not on), unauthorized (wrong code), rate_limited. */
    async disableTotp(principal: Principal, code: string): Promise<void> {
      const user = await requireAccount(principal)
      if (!user.totp_enabled) throw new AppError('invalid_request', 'Two-factor authentication is not on')
      await auth.checkSecondFactor(user, code)
      await users.setTotp(user.id, null, false)
      await deps.audit.record({
        projectId: user.project_id,
        action: 'user.totp_disabled',
        actor: principal,
        target: { type: 'user', id: user.id },
      })
    },
  }

  /** The caller's own account: a signed-in person (never a key or system work). Throws unauthorized, forbidden. */
  async function requireAccount(principal: Principal) {
    const userId = requirePerson(principal, 'Two-factor authentication')
    if (principal.kind !== 'user') throw new AppError('forbidden', 'Only a signed-in person can do this')
    const row = await users.findRow(userId)
    if (!row) throw new AppError('unauthorized', 'Invalid or expired session')
    return row
  }
}

export type AuthService = ReturnType<typeof createAuthService>
