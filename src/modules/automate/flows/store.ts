import type { Kysely, Transaction } from 'kysely'
import type { DbKind } from '../../../lib/db/index.js'
import { lockTransaction } from '../../../lib/db/index.js'

export interface FlowRow {
  id: string
  project_id: string
  slug: string
  name: string
  description: string
  icon: string
  color: string
  status: string
  trigger_type: string
  /** JSON text, as are operations, options and collections. */
  trigger_config: string
  operations: string
  options: string
  collections: string
  created_by: string | null
  run_as: string
  current_version: number
  published_version: number | null
  /** Who made the published version the one that runs (publish, rollback): a person's id or `key:<id>` (decision 045). */
  published_by: string | null
  webhook_token: string
  last_run_at: number | null
  run_count: number
  error_count: number
  created_at: number
  updated_at: number
  /** A system-managed flow: the system operation it runs (system_archival, …); null for a user's flow. */
  system: string | null
}

export interface FlowVersionRow {
  flow_id: string
  version: number
  project_id: string
  /** JSON: the FlowDefinition as published. */
  snapshot: string
  change_summary: string
  created_by: string | null
  created_at: number
}

export type FlowChanges = Partial<
  Omit<FlowRow, 'id' | 'project_id' | 'created_at' | 'created_by' | 'webhook_token' | 'system'>
>

type Tables = {
  flows: FlowRow
  flow_versions: FlowVersionRow
  flow_runs: { id: string; flow_id: string }
  flow_step_logs: { run_id: string }
}
export type FlowsDb = Kysely<Tables>

/** SQL for `flows` and `flow_versions`; this module is their only owner. Every function takes the project first. */
export function createFlowsStore(systemDb: Kysely<any>, kind: DbKind) {
  const db = systemDb as FlowsDb
  const numeric = (row: FlowRow): FlowRow => ({
    ...row,
    current_version: Number(row.current_version),
    published_version: row.published_version === null ? null : Number(row.published_version),
    last_run_at: row.last_run_at === null ? null : Number(row.last_run_at),
    run_count: Number(row.run_count),
    error_count: Number(row.error_count),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  })
  return {
    async list(projectId: string): Promise<FlowRow[]> {
      const rows = await db
        .selectFrom('flows')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map(numeric)
    },
    async byId(projectId: string, id: string, trx: FlowsDb = db): Promise<FlowRow | undefined> {
      const row = await trx
        .selectFrom('flows')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return row && numeric(row)
    },
    /** Across projects: the webhook token is the only handle an anonymous caller has. */
    async byWebhookTokenAcrossProjects(token: string): Promise<FlowRow | undefined> {
      const row = await db.selectFrom('flows').selectAll().where('webhook_token', '=', token).executeTakeFirst()
      return row && numeric(row)
    },
    async active(projectId: string): Promise<FlowRow[]> {
      const rows = await db
        .selectFrom('flows')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('status', '=', 'active')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map(numeric)
    },
    async activeAcrossProjects(): Promise<FlowRow[]> {
      const rows = await db
        .selectFrom('flows')
        .selectAll()
        .where('status', '=', 'active')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map(numeric)
    },
    /** The project's system-managed flow of this kind, if installed. */
    async bySystem(projectId: string, kind: string, trx: FlowsDb = db): Promise<FlowRow | undefined> {
      const row = await trx
        .selectFrom('flows')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('system', '=', kind)
        .executeTakeFirst()
      return row && numeric(row)
    },
    async slugTaken(projectId: string, slug: string, trx: FlowsDb = db): Promise<boolean> {
      return (
        (await trx
          .selectFrom('flows')
          .select('id')
          .where('project_id', '=', projectId)
          .where('slug', '=', slug)
          .executeTakeFirst()) !== undefined
      )
    },
    /** Slugs of the project starting with `prefix` (to derive a free one). */
    async slugsLike(projectId: string, prefix: string, trx: FlowsDb = db): Promise<string[]> {
      const rows = await trx
        .selectFrom('flows')
        .select('slug')
        .where('project_id', '=', projectId)
        .where('slug', 'like', `${prefix}%`)
        .execute()
      return rows.map((r) => r.slug)
    },
    /** The project's own flows (the max-flows quota): system-managed ones are not counted. */
    async count(projectId: string, trx: FlowsDb = db): Promise<number> {
      const row = await trx
        .selectFrom('flows')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', projectId)
        .where('system', 'is', null)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    /**
     * Runs `work` in a transaction holding the project's flows lock (a quota count and the insert it
     * allows happen together on every instance).
     */
    async locked<T>(projectId: string, work: (trx: FlowsDb) => Promise<T>): Promise<T> {
      return db.transaction().execute(async (trx: Transaction<Tables>) => {
        await lockTransaction(trx, kind, `automate.flows:${projectId}`)
        return work(trx)
      })
    },
    async insert(row: FlowRow, trx: FlowsDb = db): Promise<void> {
      await trx.insertInto('flows').values(row).execute()
    },
    /** Applies the changes; false when the row is gone. */
    async update(projectId: string, id: string, changes: FlowChanges, trx: FlowsDb = db): Promise<boolean> {
      const result = await trx
        .updateTable('flows')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** Deletes the flow with its versions, runs and their step logs (explicitly: not every install enforces the cascades). */
    async delete(projectId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const runs = trx.selectFrom('flow_runs').select('id').where('flow_id', '=', id)
        await trx.deleteFrom('flow_step_logs').where('run_id', 'in', runs).execute()
        await trx.deleteFrom('flow_runs').where('flow_id', '=', id).execute()
        await trx.deleteFrom('flow_versions').where('project_id', '=', projectId).where('flow_id', '=', id).execute()
        const result = await trx
          .deleteFrom('flows')
          .where('project_id', '=', projectId)
          .where('id', '=', id)
          .executeTakeFirst()
        return Number(result.numDeletedRows) > 0
      })
    },
    async countRun(projectId: string, id: string, failed: boolean, atSeconds: number): Promise<void> {
      await db
        .updateTable('flows')
        .set((eb) => ({
          run_count: eb('run_count', '+', 1),
          error_count: failed ? eb('error_count', '+', 1) : eb.ref('error_count'),
          last_run_at: atSeconds,
        }))
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    async countRuns(projectId: string, id: string, runs: number, failures: number, atSeconds: number): Promise<void> {
      await db
        .updateTable('flows')
        .set((eb) => ({
          run_count: eb('run_count', '+', runs),
          error_count: eb('error_count', '+', failures),
          last_run_at: atSeconds,
        }))
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    async versions(projectId: string, flowId: string): Promise<FlowVersionRow[]> {
      const rows = await db
        .selectFrom('flow_versions')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('flow_id', '=', flowId)
        .orderBy('version', 'desc')
        .execute()
      return rows.map((r) => ({ ...r, version: Number(r.version), created_at: Number(r.created_at) }))
    },
    async version(
      projectId: string,
      flowId: string,
      version: number,
      trx: FlowsDb = db,
    ): Promise<FlowVersionRow | undefined> {
      const row = await trx
        .selectFrom('flow_versions')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('flow_id', '=', flowId)
        .where('version', '=', version)
        .executeTakeFirst()
      return row && { ...row, version: Number(row.version), created_at: Number(row.created_at) }
    },
    /** The published snapshots of these flows, by flow id (one query for a list). */
    async publishedSnapshots(
      projectId: string,
      flows: readonly { id: string; published_version: number | null }[],
    ): Promise<Map<string, string>> {
      const wanted = flows.filter((f) => f.published_version !== null)
      if (wanted.length === 0) return new Map()
      // Only the published version of each flow (a join, not every version of every flow).
      const rows = await db
        .selectFrom('flow_versions as v')
        .innerJoin('flows as f', (join) =>
          join.onRef('f.id', '=', 'v.flow_id').onRef('f.published_version', '=', 'v.version'),
        )
        .select(['v.flow_id', 'v.snapshot'])
        .where('v.project_id', '=', projectId)
        .where(
          'v.flow_id',
          'in',
          wanted.map((f) => f.id),
        )
        .execute()
      return new Map(rows.map((r) => [r.flow_id, r.snapshot]))
    },
    async maxVersion(projectId: string, flowId: string, trx: FlowsDb = db): Promise<number> {
      const row = await trx
        .selectFrom('flow_versions')
        .select((eb) => eb.fn.max('version').as('v'))
        .where('project_id', '=', projectId)
        .where('flow_id', '=', flowId)
        .executeTakeFirst()
      return row?.v == null ? 0 : Number(row.v)
    },
    async insertVersion(row: FlowVersionRow, trx: FlowsDb = db): Promise<void> {
      await trx.insertInto('flow_versions').values(row).execute()
    },
    /** Runs `work` in a transaction holding the flow's lock (publish numbers versions one at a time). */
    async lockedFlow<T>(flowId: string, work: (trx: FlowsDb) => Promise<T>): Promise<T> {
      return db.transaction().execute(async (trx: Transaction<Tables>) => {
        await lockTransaction(trx, kind, `automate.flow:${flowId}`)
        return work(trx)
      })
    },
  }
}

export type FlowsStore = ReturnType<typeof createFlowsStore>
