import type { Migration } from '../../lib/db/index.js'

/**
 * Whether an account's email is known to belong to its holder: set for accounts an administrator made,
 * and once someone proves the inbox (a reset link, a magic link) or a provider vouches for it. Linking a
 * social sign-in to an account whose address was never proven discards that account's credentials.
 */
export const m0003UsersEmailTrusted: Migration = {
  name: '0003-users-email-trusted',
  async up(db) {
    await db.schema
      .alterTable('users')
      .addColumn('email_trusted', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute()
  },
}
