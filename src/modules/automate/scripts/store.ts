import type { Kysely } from 'kysely'

export interface ScriptRow {
  id: string
  project_id: string
  name: string
  description: string
  code: string
  /** JSON array of host names. */
  allowed_hosts: string
  max_cpu_ms: number
  max_memory_mb: number
  created_by: string | null
  created_at: number
  updated_at: number
}

export type ScriptChanges = Partial<
  Pick<ScriptRow, 'name' | 'description' | 'code' | 'allowed_hosts' | 'max_cpu_ms' | 'max_memory_mb' | 'updated_at'>
>

type Tables = { automate_scripts: ScriptRow }

// PostgreSQL answers bigint columns as strings.
const numeric = (row: ScriptRow): ScriptRow => ({
  ...row,
  max_cpu_ms: Number(row.max_cpu_ms),
  max_memory_mb: Number(row.max_memory_mb),
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

/** SQL for `automate_scripts`; this module is its only owner. */
export function createScriptsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<ScriptRow[]> {
      const rows = await db
        .selectFrom('automate_scripts')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('name')
        .orderBy('id')
        .execute()
      return rows.map(numeric)
    },
    async byId(projectId: string, id: string): Promise<ScriptRow | undefined> {
      const row = await db
        .selectFrom('automate_scripts')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return row && numeric(row)
    },
    /** Throws AppError already_exists when the name is taken in the project. */
    async insert(row: ScriptRow): Promise<void> {
      await db.insertInto('automate_scripts').values(row).execute()
    },
    /** Applies the changes; false when the row is gone. Throws AppError already_exists when the new name is taken. */
    async update(projectId: string, id: string, changes: ScriptChanges): Promise<boolean> {
      const result = await db
        .updateTable('automate_scripts')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('automate_scripts')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}
