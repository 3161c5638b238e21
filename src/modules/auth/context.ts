import type { Clock } from '../../lib/clock.js'
import { randomToken, sha256Hex, type SecretBox } from '../../lib/crypto/index.js'
import { AppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import type { Logger } from '../../lib/log.js'
import type { Mailer } from '../../lib/mail/index.js'
import { principals, type Principal } from '../../lib/principal.js'
import type { RateLimiter } from '../../lib/ratelimit/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { SettingsService } from '../settings/index.js'
import type { UserRow, UsersService } from '../users/index.js'
import type { AuthEvents } from './events.js'
import type { Sessions } from './sessions.js'
import type { AuthStore } from './store.js'
import { checkTotp } from './totp.js'

export interface OAuthProvider {
  clientId: string
  clientSecret: string
  authorizeUrl: string
  tokenUrl: string
  profileUrl: string
}

export interface AuthDeps {
  store: AuthStore
  sessions: Sessions
  users: UsersService
  access: AccessService
  settings: SettingsService
  audit: AuditService
  mailer: Mailer
  limiter: RateLimiter
  events: EventBus<AuthEvents>
  clock: Clock
  log: Logger
  totpBox: SecretBox
  defaultProjectId: string
  publicUrl: string
  trustedOrigins: readonly string[]
  rateLimitPerMinute: number
  passwordIterations: number
  oauth: { github: OAuthProvider | null; google: OAuthProvider | null }
}

/** The caller's network context, for rate limits and the audit log. */
export interface RequestContext {
  ip: string
}

/** What sign-up and every sign-in answer (core-api.md § Auth endpoints). */
export interface SignedIn {
  token: string
  user: { id: string; email: string | null; name: string; role: string }
}

/** Helpers shared by the sign-in, recovery and social flows. */
export function createAuthContext(deps: AuthDeps) {
  const { store, clock } = deps

  /** Counts one attempt against a key; throws rate_limited with Retry-After past the limit. */
  async function countAttempt(key: string): Promise<void> {
    const result = await deps.limiter.hit(key, deps.rateLimitPerMinute, 60_000)
    if (!result.allowed) {
      throw new AppError(
        'rate_limited',
        'Too many attempts; wait a moment and try again',
        { retryAfter: result.retryAfterSeconds },
        {
          headers: { 'Retry-After': String(result.retryAfterSeconds) },
        },
      )
    }
  }

  return {
    deps,

    /** Counts one attempt against the client IP; throws rate_limited with Retry-After past the limit. */
    limit(bucket: 'auth' | 'auth-mail', ctx: RequestContext): Promise<void> {
      return countAttempt(`${bucket}:${ctx.ip}`)
    },

    /** The anonymous caller of the default project, as sign-up is checked (addendum §2). */
    publicPrincipal(projectId: string = deps.defaultProjectId): Principal {
      return principals.anonymous(projectId)
    },

    /** Whether self-service sign-up is open: the public role holds system/users:create. */
    async signUpOpen(projectId: string = deps.defaultProjectId): Promise<boolean> {
      const publicCaller = this.publicPrincipal(projectId)
      return (await deps.access.decide(publicCaller, 'system/users', 'create')).allowed
    },

    /**
     * Checks the second factor of an account with TOTP enabled: no code → mfa_required, a wrong or replayed
     * code → unauthorized, too many codes for the account this minute → rate_limited. Records the step used
     * so it cannot be replayed.
     */
    async checkSecondFactor(user: UserRow, code: string | undefined): Promise<void> {
      if (!user.totp_enabled || !user.totp_secret) return
      if (!code)
        throw new AppError(
          'mfa_required',
          'This account uses two-factor authentication: send the code from the authenticator app',
        )
      // Per account, not only per client: six digits fall to guesses spread over many addresses, and a
      // magic link survives a wrong code, so its holder could otherwise try codes without end.
      await countAttempt(`totp:${user.id}`)
      // Keyed by the enrolment too: a secret enrolled after a disable starts with no used step.
      const key = sha256Hex(`totp-step:${user.id}:${user.totp_secret}`)
      const last = await store.peekToken(key, 'totp_step')
      const lastStep = last ? (JSON.parse(last.data) as { step: number }).step : null
      const step = checkTotp(deps.totpBox.open(user.totp_secret), code, clock.now(), lastStep)
      if (step === null) throw new AppError('unauthorized', 'Invalid two-factor code')
      const now = clock.seconds()
      // The read above is not atomic with the write below: claiming the step in one statement means two
      // requests racing with the same code cannot both pass.
      const claimed = await store.claimToken({
        token_hash: sha256Hex(`${key}:${step}`),
        kind: 'totp_used',
        user_id: user.id,
        data: '{}',
        created_at: now,
        expires_at: now + 120,
      })
      if (!claimed) throw new AppError('unauthorized', 'Invalid two-factor code')
      await store.upsertToken({
        token_hash: key,
        kind: 'totp_step',
        user_id: user.id,
        data: JSON.stringify({ step }),
        created_at: now,
        expires_at: now + 120,
      })
    },

    /** Opens a session for an account that passed every check, and says so (audit, user.login). */
    async issueSession(user: UserRow, method: string, ctx: RequestContext): Promise<SignedIn> {
      const session = await deps.sessions.create(user.id)
      const public_ = await deps.users.toUser(user)
      await deps.audit.record({
        projectId: user.project_id,
        action: 'user.sign_in',
        actor: null,
        actorUserId: user.id,
        target: { type: 'user', id: user.id },
        ip: ctx.ip,
        details: { method },
      })
      deps.events.emit('user.login', {
        projectId: user.project_id,
        userId: user.id,
        method,
        principal: { id: user.id, kind: 'user', role: public_.role },
        at: clock.seconds(),
      })
      return {
        token: session.token,
        user: { id: public_.id, email: public_.email, name: public_.name, role: public_.role },
      }
    },

    /** Creates a one-time token of a kind (reset, magic link, OAuth state) and returns the raw value. */
    async issueToken(
      kind: string,
      userId: string | null,
      ttlSeconds: number,
      data: Record<string, unknown> = {},
    ): Promise<{ token: string; expiresAt: number }> {
      const token = randomToken(32)
      const now = clock.seconds()
      await store.insertToken({
        token_hash: sha256Hex(token),
        kind,
        user_id: userId,
        data: JSON.stringify(data),
        created_at: now,
        expires_at: now + ttlSeconds,
      })
      return { token, expiresAt: now + ttlSeconds }
    },

    /** Consumes a one-time token: it works once, before it expires. Null when unknown, used or expired. */
    async takeToken(
      kind: string,
      token: string,
    ): Promise<{ userId: string | null; data: Record<string, unknown> } | null> {
      if (token.length > 200) return null
      const row = await store.takeToken(sha256Hex(token), kind)
      if (!row || row.expires_at <= clock.seconds()) return null
      return { userId: row.user_id, data: JSON.parse(row.data) as Record<string, unknown> }
    },

    /** Reads a one-time token without consuming it (to check a second factor, or its browser, first). */
    async peekToken(
      kind: string,
      token: string,
    ): Promise<{ userId: string | null; data: Record<string, unknown> } | null> {
      if (token.length > 200) return null
      const row = await store.peekToken(sha256Hex(token), kind)
      if (!row || row.expires_at <= clock.seconds()) return null
      return { userId: row.user_id, data: JSON.parse(row.data) as Record<string, unknown> }
    },

    /** Sends a mail when a channel is configured; failures are logged, never shown to the requester. */
    async mail(to: string, subject: string, text: string): Promise<void> {
      if (deps.mailer.channel === 'email_no_channel') {
        deps.log.warn({ subject }, 'no email channel configured; mail not sent')
        return
      }
      try {
        await deps.mailer.send({ to, subject, text })
      } catch (err) {
        deps.log.error({ err, subject }, 'mail could not be sent')
      }
    },
  }
}

export type AuthContext = ReturnType<typeof createAuthContext>
