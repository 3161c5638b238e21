import { sql, type Kysely } from 'kysely'

export interface AiTokenUsageRow {
  project_id: string
  /** YYYY-MM-DD, UTC. */
  day: string
  tokens: number | string | bigint
}

type Tables = { ai_token_usage: AiTokenUsageRow }

/** Days of history kept per project (a month and a little: enough for a monthly summary). */
export const keptDays = 35

/** SQL for `ai_token_usage`; this module is its only owner. */
export function createAiUsageStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    /** Tokens the project used on `day` (0 when none). */
    async tokens(projectId: string, day: string): Promise<number> {
      const row = await db
        .selectFrom('ai_token_usage')
        .select('tokens')
        .where('project_id', '=', projectId)
        .where('day', '=', day)
        .executeTakeFirst()
      return row ? Number(row.tokens) : 0
    },
    /** Adds `tokens` to the project's `day` in one statement (concurrent runs add up), and drops days older than `oldest`. */
    async add(projectId: string, day: string, tokens: number, oldest: string): Promise<void> {
      await db
        .insertInto('ai_token_usage')
        .values({ project_id: projectId, day, tokens })
        .onConflict((oc) =>
          oc.columns(['project_id', 'day']).doUpdateSet({ tokens: sql`ai_token_usage.tokens + excluded.tokens` }),
        )
        .execute()
      await db.deleteFrom('ai_token_usage').where('project_id', '=', projectId).where('day', '<', oldest).execute()
    },
  }
}
