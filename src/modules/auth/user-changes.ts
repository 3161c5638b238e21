import type { UserChange } from '../users/index.js'
import type { ApiKeysService } from '../apikeys/index.js'
import type { Sessions } from './sessions.js'
import type { AuthStore } from './store.js'

/**
 * The one-time tokens that open a session or set the password (recovery.ts, social.ts): a reset link, a
 * magic link, a social sign-in waiting for its second factor. A password change spends them all. Not the
 * TOTP replay records (`totp_step`, `totp_used`): dropping those would let a used code pass again.
 */
export const signInTokenKinds = ['password_reset', 'magic_link', 'mfa_pending'] as const

/**
 * What a change to an account ends, in one place (docs/auth.md § Sessions, decision 013). The auth module
 * registers it with `users.onChange` (auth/module.ts), and users run it before the changing request answers:
 *
 * | change   | sessions        | reset and magic links, pending sign-ins | cached API keys |
 * |----------|-----------------|-----------------------------------------|-----------------|
 * | profile  | cache refreshed | kept                                    | kept            |
 * | role     | cache refreshed | kept                                    | dropped         |
 * | banned   | ended           | kept (sign-ins refuse a banned account) | dropped         |
 * | password | ended           | spent                                   | kept: keys survive |
 * | deleted  | ended           | gone with the account                   | dropped         |
 */
export function createUserChanges(deps: { store: AuthStore; sessions: Sessions; apiKeys: ApiKeysService }) {
  const { store, sessions, apiKeys } = deps
  return async function userChanged(userId: string, change: UserChange): Promise<void> {
    if (change === 'profile' || change === 'role') await sessions.refreshUser(userId)
    else {
      // Links first: one used between these two steps could otherwise open a session after they end.
      if (change === 'password') await store.deleteTokensOf(userId, signInTokenKinds)
      await sessions.revokeUser(userId)
    }
    // A key is resolved with its creator's role and ban; a password says nothing about either.
    if (change !== 'profile' && change !== 'password') await apiKeys.forgetUser(userId)
  }
}
