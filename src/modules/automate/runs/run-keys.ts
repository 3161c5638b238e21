import type { Kysely } from 'kysely'

interface KeyRow {
  project_id: string
  flow_id: string
  key: string
  run_id: string
  created_at: number
}

/** How long an Idempotency-Key answers its first call's run. */
export const idempotencyWindowMs = 24 * 3_600_000

export type RunKeys = ReturnType<typeof createRunKeys>

/**
 * Idempotency-Keys of execute, webhook and api_endpoint calls (`flow_run_keys`, decision 054): the first
 * call with a key owns it for 24 h; a repeat in that time answers the run the first one started. The key's
 * row is written before the run, so of many concurrent calls exactly one starts a run (the primary key
 * decides); a start that is then refused gives its key back.
 */
export function createRunKeys(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<{ flow_run_keys: KeyRow }>
  return {
    /** Claims `key` for `runId`: null when this call owns it now, else the run id of the call that does. */
    async claim(projectId: string, flowId: string, key: string, runId: string, now: number): Promise<string | null> {
      for (let tries = 0; tries < 3; tries++) {
        const inserted = await db
          .insertInto('flow_run_keys')
          .values({ project_id: projectId, flow_id: flowId, key, run_id: runId, created_at: now })
          .onConflict((oc) => oc.columns(['project_id', 'flow_id', 'key']).doNothing())
          .returning('run_id')
          .execute()
        if (inserted.length > 0) return null
        const held = await db
          .selectFrom('flow_run_keys')
          .select(['run_id', 'created_at'])
          .where('project_id', '=', projectId)
          .where('flow_id', '=', flowId)
          .where('key', '=', key)
          .executeTakeFirst()
        if (!held) continue // given back meanwhile: try again
        if (Number(held.created_at) > now - idempotencyWindowMs) return held.run_id
        // Expired: this call takes it over, unless another one just did.
        const taken = await db
          .updateTable('flow_run_keys')
          .set({ run_id: runId, created_at: now })
          .where('project_id', '=', projectId)
          .where('flow_id', '=', flowId)
          .where('key', '=', key)
          .where('created_at', '=', held.created_at)
          .executeTakeFirst()
        if (Number(taken.numUpdatedRows) > 0) return null
      }
      throw new Error('Could not claim an Idempotency-Key that keeps changing hands')
    },

    /** Gives a key back (its start was refused), unless another call holds it by now. */
    async release(projectId: string, flowId: string, key: string, runId: string): Promise<void> {
      await db
        .deleteFrom('flow_run_keys')
        .where('project_id', '=', projectId)
        .where('flow_id', '=', flowId)
        .where('key', '=', key)
        .where('run_id', '=', runId)
        .execute()
    },

    /** Forgets keys past their window (the hourly cleanup). */
    async prune(now: number): Promise<void> {
      await db
        .deleteFrom('flow_run_keys')
        .where('created_at', '<', now - idempotencyWindowMs)
        .execute()
    },
  }
}
