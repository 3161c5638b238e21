import type { Kysely } from 'kysely'

export type InstallStatus = 'in_progress' | 'partial' | 'complete' | 'superseded' | 'uninstalled'
export type ResourceStatus = 'pending' | 'settled' | 'failed' | 'skipped' | 'rolled_back' | 'detached'

export interface InstallRow {
  id: string
  project_id: string
  blueprint_id: string
  namespace: string
  name: string
  version: string
  doc_hash: string
  source_md: string
  params_json: string
  secrets_json: string
  assemblies_json: string
  consent_json: string
  status: InstallStatus
  mode: 'client' | 'server'
  created_by: string
  supersedes: string | null
  superseded_by: string | null
  created_at: number
  updated_at: number
}

export interface ResourceRow {
  id: string
  project_id: string
  install_id: string
  blueprint_id: string
  namespace: string
  brick_id: string
  brick_kind: string
  resource_kind: string
  resource_ref: string | null
  verdict: string
  position: number
  content_hash: string | null
  canonical_json: string | null
  status: ResourceStatus
  error: string | null
  created_at: number
  updated_at: number
}

type Tables = { blueprint_installs: InstallRow; blueprint_resources: ResourceRow }

export type LedgerStore = ReturnType<typeof createLedgerStore>

/** SQL of the install ledger (migration 0033); this module is its only owner. Every statement names the project. */
export function createLedgerStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const num = <R extends { created_at: number; updated_at: number }>(row: R): R => ({
    ...row,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  })
  const resource = (row: ResourceRow): ResourceRow => ({ ...num(row), position: Number(row.position) })
  return {
    async install(projectId: string, id: string): Promise<InstallRow | undefined> {
      const row = await db
        .selectFrom('blueprint_installs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return row && num(row)
    },
    /** Newest first; `blueprintId` narrows to one blueprint's runs (in every namespace). */
    async installs(projectId: string, blueprintId?: string): Promise<InstallRow[]> {
      let query = db.selectFrom('blueprint_installs').selectAll().where('project_id', '=', projectId)
      if (blueprintId !== undefined) query = query.where('blueprint_id', '=', blueprintId)
      return (await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(500).execute()).map(num)
    },
    /** The blueprint's live run in a namespace (not superseded or uninstalled), the newest when several. */
    async current(projectId: string, blueprintId: string, namespace: string): Promise<InstallRow | undefined> {
      const row = await db
        .selectFrom('blueprint_installs')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('blueprint_id', '=', blueprintId)
        .where('namespace', '=', namespace)
        .where('status', 'in', ['in_progress', 'partial', 'complete'])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst()
      return row && num(row)
    },
    /** The resource rows the blueprint holds in the project (any run, not let go), in dependency order. */
    async held(projectId: string, blueprintId: string, namespace: string): Promise<ResourceRow[]> {
      const rows = await db
        .selectFrom('blueprint_resources')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('blueprint_id', '=', blueprintId)
        .where('namespace', '=', namespace)
        .where('status', 'not in', ['rolled_back', 'detached'])
        .orderBy('position')
        .execute()
      return rows.map(resource)
    },
    /** The rows an uninstall let go (rolled_back, detached), by brick: a later install takes them up again. */
    async released(projectId: string, blueprintId: string, namespace: string): Promise<Map<string, string>> {
      const rows = await db
        .selectFrom('blueprint_resources')
        .select(['id', 'brick_id'])
        .where('project_id', '=', projectId)
        .where('blueprint_id', '=', blueprintId)
        .where('namespace', '=', namespace)
        .where('status', 'in', ['rolled_back', 'detached'])
        .orderBy('updated_at')
        .execute()
      return new Map(rows.map((r) => [r.brick_id, r.id]))
    },
    /** The rows of one run, in dependency order. */
    async resources(projectId: string, installId: string): Promise<ResourceRow[]> {
      const rows = await db
        .selectFrom('blueprint_resources')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('install_id', '=', installId)
        .orderBy('position')
        .execute()
      return rows.map(resource)
    },
    /** Another install (blueprint and namespace) holding a resource (a claim), by kind and ref. */
    async claimant(
      projectId: string,
      blueprintId: string,
      namespace: string,
      resourceKind: string,
      ref: string,
    ): Promise<{ blueprintId: string; namespace: string } | undefined> {
      const rows = await db
        .selectFrom('blueprint_resources')
        .select(['blueprint_id', 'namespace'])
        .where('project_id', '=', projectId)
        .where('resource_kind', '=', resourceKind)
        .where('resource_ref', '=', ref)
        .where('status', 'not in', ['rolled_back', 'detached'])
        .execute()
      const other = rows.find((r) => r.blueprint_id !== blueprintId || r.namespace !== namespace)
      return other && { blueprintId: other.blueprint_id, namespace: other.namespace }
    },
    /**
     * Opens a run: the install row, the predecessor superseded and pointed at it, and every resource row,
     * taking over the rows the blueprint already holds for the same bricks (by id), in one transaction.
     */
    async open(
      install: InstallRow,
      rows: readonly ResourceRow[],
      takenOver: readonly { id: string; changes: Partial<ResourceRow> }[],
    ): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('blueprint_installs').values(install).execute()
        if (install.supersedes !== null)
          await trx
            .updateTable('blueprint_installs')
            .set({ status: 'superseded', superseded_by: install.id, updated_at: install.created_at })
            .where('project_id', '=', install.project_id)
            .where('id', '=', install.supersedes)
            .execute()
        for (const { id, changes } of takenOver)
          await trx
            .updateTable('blueprint_resources')
            .set(changes)
            .where('project_id', '=', install.project_id)
            .where('id', '=', id)
            .execute()
        if (rows.length > 0)
          await trx
            .insertInto('blueprint_resources')
            .values([...rows])
            .execute()
      })
    },
    async updateResource(projectId: string, id: string, changes: Partial<ResourceRow>): Promise<void> {
      await db
        .updateTable('blueprint_resources')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    /** Moves a run from one of `from` to `status`; false when it was not in one of them (a race lost). */
    async setInstallStatus(
      projectId: string,
      id: string,
      from: readonly InstallStatus[],
      status: InstallStatus,
      now: number,
    ): Promise<boolean> {
      const result = await db
        .updateTable('blueprint_installs')
        .set({ status, updated_at: now })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .where('status', 'in', [...from])
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async touch(projectId: string, id: string, now: number): Promise<void> {
      await db
        .updateTable('blueprint_installs')
        .set({ updated_at: now })
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .execute()
    },
    /** Runs in progress not touched since `before`, in every project (the sweep). */
    async stale(before: number): Promise<InstallRow[]> {
      const rows = await db
        .selectFrom('blueprint_installs')
        .selectAll()
        .where('status', '=', 'in_progress')
        .where('updated_at', '<', before)
        .limit(1000)
        .execute()
      return rows.map(num)
    },
  }
}
