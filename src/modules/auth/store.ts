import type { Kysely } from 'kysely'

export interface SessionRow {
  id: string
  token_hash: string
  user_id: string
  created_at: number
  expires_at: number
}

export interface AuthTokenRow {
  token_hash: string
  kind: string
  user_id: string | null
  data: string
  created_at: number
  expires_at: number
}

export interface OAuthAccountRow {
  provider: string
  provider_user_id: string
  user_id: string
  created_at: number
}

type Tables = { sessions: SessionRow; auth_tokens: AuthTokenRow; oauth_accounts: OAuthAccountRow }

/** SQL for `sessions`, `auth_tokens` (one-time tokens) and `oauth_accounts`; this module owns them. */
export function createAuthStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async insertSession(row: SessionRow): Promise<void> {
      await db.insertInto('sessions').values(row).execute()
    },
    async sessionByHash(hash: string): Promise<SessionRow | undefined> {
      return db.selectFrom('sessions').selectAll().where('token_hash', '=', hash).executeTakeFirst()
    },
    async deleteSession(hash: string): Promise<void> {
      await db.deleteFrom('sessions').where('token_hash', '=', hash).execute()
    },
    async deleteSessionsOf(userId: string): Promise<void> {
      await db.deleteFrom('sessions').where('user_id', '=', userId).execute()
    },
    async deleteExpiredSessions(now: number): Promise<void> {
      await db.deleteFrom('sessions').where('expires_at', '<=', now).execute()
      await db.deleteFrom('auth_tokens').where('expires_at', '<=', now).execute()
    },

    async insertToken(row: AuthTokenRow): Promise<void> {
      await db.insertInto('auth_tokens').values(row).execute()
    },
    async upsertToken(row: AuthTokenRow): Promise<void> {
      await db
        .insertInto('auth_tokens')
        .values(row)
        .onConflict((oc) =>
          oc
            .column('token_hash')
            .doUpdateSet({ data: row.data, expires_at: row.expires_at, created_at: row.created_at }),
        )
        .execute()
    },
    /** Inserts a token unless one with its hash exists; true when this call inserted it (an atomic claim). */
    async claimToken(row: AuthTokenRow): Promise<boolean> {
      const inserted = await db
        .insertInto('auth_tokens')
        .values(row)
        .onConflict((oc) => oc.column('token_hash').doNothing())
        .returning('token_hash')
        .executeTakeFirst()
      return inserted !== undefined
    },
    async peekToken(hash: string, kind: string): Promise<AuthTokenRow | undefined> {
      return db
        .selectFrom('auth_tokens')
        .selectAll()
        .where('token_hash', '=', hash)
        .where('kind', '=', kind)
        .executeTakeFirst()
    },
    /** Deletes the account's outstanding one-time tokens of these kinds; returns how many went. */
    async deleteTokensOf(userId: string, kinds: readonly string[]): Promise<number> {
      const result = await db
        .deleteFrom('auth_tokens')
        .where('user_id', '=', userId)
        .where('kind', 'in', kinds)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
    /** Removes and returns the token in one statement, so two concurrent uses cannot both succeed. */
    async takeToken(hash: string, kind: string): Promise<AuthTokenRow | undefined> {
      return db
        .deleteFrom('auth_tokens')
        .where('token_hash', '=', hash)
        .where('kind', '=', kind)
        .returningAll()
        .executeTakeFirst()
    },

    async oauthAccount(provider: string, providerUserId: string): Promise<OAuthAccountRow | undefined> {
      return db
        .selectFrom('oauth_accounts')
        .selectAll()
        .where('provider', '=', provider)
        .where('provider_user_id', '=', providerUserId)
        .executeTakeFirst()
    },
    async linkOAuthAccount(row: OAuthAccountRow): Promise<void> {
      await db
        .insertInto('oauth_accounts')
        .values(row)
        .onConflict((oc) => oc.columns(['provider', 'provider_user_id']).doNothing())
        .execute()
    },
  }
}

export type AuthStore = ReturnType<typeof createAuthStore>
