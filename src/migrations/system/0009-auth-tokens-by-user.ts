import type { Migration } from '../../lib/db/index.js'

/**
 * A password change spends every outstanding reset link, magic link and pending sign-in of the account
 * (decision 013): one indexed delete by user, instead of a scan of every live token. The cascade from a
 * deleted user uses it too.
 */
export const m0009AuthTokensByUser: Migration = {
  name: '0009-auth-tokens-by-user',
  async up(db) {
    await db.schema.createIndex('auth_tokens_user').on('auth_tokens').columns(['user_id', 'kind']).execute()
  },
}
