import type { Kysely } from 'kysely'

export interface ContainerRow {
  id: string
  project_id: string
  name: string
  storage_connection_id: string | null
  bucket_name: string | null
  prefix: string
  visibility: 'public' | 'private'
  /** JSON: [{ name, size }]. */
  image_sizes: string
  max_file_bytes: number | null
  /** JSON: media types. */
  allowed_types: string
  created_by: string | null
  created_at: number
  updated_at: number
}

export type ContainerChanges = Partial<Omit<ContainerRow, 'id' | 'project_id' | 'created_by' | 'created_at'>>

type Tables = { file_containers: ContainerRow }

/** SQL for `file_containers`; this module is its only owner. Every function takes the project first. */
export function createContainersStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string, page: number, limit: number): Promise<{ rows: ContainerRow[]; total: number }> {
      const base = db.selectFrom('file_containers').where('project_id', '=', projectId)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('name')
          .orderBy('id')
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows, total: Number(count?.n ?? 0) }
    },
    async byId(projectId: string, id: string): Promise<ContainerRow | undefined> {
      return db
        .selectFrom('file_containers')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    async insert(row: ContainerRow): Promise<void> {
      await db.insertInto('file_containers').values(row).execute()
    },
    /** False when the row is gone. */
    async update(projectId: string, id: string, changes: ContainerChanges): Promise<boolean> {
      const result = await db
        .updateTable('file_containers')
        .set(changes)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    /** False when there was no such row. */
    async delete(projectId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('file_containers')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
  }
}

export type ContainersStore = ReturnType<typeof createContainersStore>
