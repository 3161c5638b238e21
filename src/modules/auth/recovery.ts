import { AppError } from '../../lib/errors.js'
import { isSuperAdmin, type Principal } from '../../lib/principal.js'
import type { UserRow } from '../users/index.js'
import type { AuthContext, RequestContext, SignedIn } from './context.js'
import { trustedUrl, withQuery } from './trusted-urls.js'

const resetTtlSeconds = 3600
const magicLinkTtlSeconds = 15 * 60

/** Password recovery (mailed reset links, admin-issued reset links) and magic-link sign-in. */
export function createRecovery(auth: AuthContext) {
  const { deps } = auth
  const { users } = deps

  function describe(user: UserRow): string {
    return user.username
      ? `the account "${user.username}"`
      : user.name
        ? `the account of ${user.name} (${user.email})`
        : `the account ${user.email}`
  }

  async function resetLink(user: UserRow, redirectTo: string | null): Promise<{ url: string; expiresAt: number }> {
    const { token, expiresAt } = await auth.issueToken('password_reset', user.id, resetTtlSeconds)
    const base = redirectTo ?? `${deps.publicUrl}/api/auth/reset-password`
    return { url: withQuery(base, { token }), expiresAt }
  }

  return {
    /**
     * Mails a one-hour reset link to each account the identifier names (an email shared by several
     * accounts gets one mail per account, each naming the account it resets). Always succeeds, so the
     * answer reveals nothing; rate-limited per client IP. Throws rate_limited, invalid_request (redirectTo).
     */
    async requestPasswordReset(
      input: { identifier?: string; email?: string; redirectTo?: string },
      ctx: RequestContext,
    ): Promise<void> {
      await auth.limit('auth-mail', ctx)
      const redirectTo = input.redirectTo ? trustedUrl(input.redirectTo, deps.publicUrl, deps.trustedOrigins) : null
      const identifier = (input.identifier ?? input.email ?? '').trim()
      if (identifier === '' || identifier.length > 254) return
      const accounts = identifier.includes('@')
        ? await users.findRowsByEmail(identifier)
        : [await users.findRowByUsername(identifier)].filter((u): u is UserRow => u !== null)
      for (const user of accounts) {
        if (!user.email || user.banned) continue
        const { url } = await resetLink(user, redirectTo)
        await auth.mail(
          user.email,
          'Reset your password',
          `Someone asked to reset the password of ${describe(user)}.\n\nTo choose a new password, open this link within an hour:\n${url}\n\n` +
            'A new password signs the account out everywhere and cancels every other reset or sign-in link still open. ' +
            'API keys made on the account keep working: list and revoke them with GET and DELETE /api/auth/api-keys.\n\n' +
            'If you did not ask for this, ignore this mail; the password stays as it is.\n',
        )
      }
    },

    /**
     * Sets a new password with a reset token (once, within the hour). The password change ends every session
     * of the account and spends its other reset links, magic links and pending sign-ins (users → onChange →
     * user-changes.ts); its API keys stay. Throws invalid_request (unknown, used or expired token).
     */
    async resetPassword(input: { token: string; password: string }, ctx: RequestContext): Promise<void> {
      const taken = await auth.takeToken('password_reset', input.token)
      const user = taken?.userId ? await users.findRow(taken.userId) : null
      if (!user) throw new AppError('invalid_request', 'This reset link is invalid or has expired')
      await users.setPassword(user.id, input.password)
      await users.trustEmail(user.id) // the mailed link proved the inbox
      await deps.audit.record({
        projectId: user.project_id,
        action: 'user.password_reset',
        actor: null,
        actorUserId: user.id,
        target: { type: 'user', id: user.id },
        ip: ctx.ip,
      })
    },

    /** An administrator's one-time reset link for a user (audit-logged). Throws not_found, forbidden. */
    async issueResetLink(
      actor: Principal,
      userId: string,
      ctx: RequestContext,
    ): Promise<{ url: string; expiresAt: number }> {
      await deps.access.authorize(actor, 'system/users:update')
      const projectId = actor.projectId
      const target = await users.findRow(userId)
      if (!target || target.project_id !== projectId) throw new AppError('not_found', 'User not found')
      const targetRole = await deps.access.roleById(target.project_id, target.role_id)
      if (targetRole?.name === 'super_admin' && !isSuperAdmin(actor))
        throw new AppError('forbidden', 'Only a super_admin may reset a super_admin')
      // A reset link hands over the account: only to someone who could act on the account's role.
      await deps.access.assertMayAssign(actor, target.project_id, target.role_id)
      const link = await resetLink(target, null)
      await deps.audit.record({
        projectId,
        action: 'user.recovery_link_issued',
        actor,
        target: { type: 'user', id: userId },
        ip: ctx.ip,
        details: { expiresAt: link.expiresAt },
      })
      return link
    },

    /** Mails a 15-minute sign-in link when exactly one account has the address. Always succeeds. */
    async requestMagicLink(input: { email: string; callbackURL?: string }, ctx: RequestContext): Promise<void> {
      await auth.limit('auth-mail', ctx)
      const callback = input.callbackURL ? trustedUrl(input.callbackURL, deps.publicUrl, deps.trustedOrigins) : null
      const accounts = await users.findRowsByEmail(input.email)
      const user = accounts.length === 1 ? accounts[0]! : null
      if (!user || !user.email || user.banned) return
      const { token } = await auth.issueToken('magic_link', user.id, magicLinkTtlSeconds)
      const link = withQuery(
        `${deps.publicUrl}/api/auth/magic-link/verify`,
        callback ? { token, callbackURL: callback } : { token },
      )
      await auth.mail(
        user.email,
        'Your sign-in link',
        `Open this link within 15 minutes to sign in to ${describe(user)}:\n${link}\n\nIf you did not ask for it, ignore this mail.\n`,
      )
    },

    /**
     * Signs in with a magic-link token (once, within 15 minutes). An account with TOTP also needs the code;
     * the token survives a missing or wrong code so the person can retry (codes are rate-limited per
     * account). Throws invalid_request, account_banned, mfa_required, unauthorized, rate_limited.
     */
    async verifyMagicLink(input: { token: string; code?: string }, ctx: RequestContext): Promise<SignedIn> {
      const peek = await auth.peekToken('magic_link', input.token)
      const user = peek?.userId ? await users.findRow(peek.userId) : null
      if (!user) throw new AppError('invalid_request', 'This sign-in link is invalid or has expired')
      if (user.banned) throw new AppError('account_banned', 'This account has been banned')
      await auth.checkSecondFactor(user, input.code)
      if (!(await auth.takeToken('magic_link', input.token)))
        throw new AppError('invalid_request', 'This sign-in link is invalid or has expired')
      await users.recordSignIn(user.id)
      await users.trustEmail(user.id) // the mailed link proved the inbox
      return auth.issueSession(user, 'magic_link', ctx)
    },
  }
}

export type Recovery = ReturnType<typeof createRecovery>
