import type { Kysely } from 'kysely'

export interface CollectionRow {
  id: string
  project_id: string
  name: string
  storage_type: string
  database_id: string
  schema_version: number
  fields: string
  /** Compound indexes, JSON; null for none. */
  indexes: string | null
  /** The layout its table's indexes were built with (ddl.ts currentIndexLayout). */
  index_layout: number
  access_control: string | null
  owner_scoped: boolean | number
  created_at: number
  updated_at: number
}

type Tables = { collections: CollectionRow }

/** SQL for the `collections` registry (system database); this module is its only owner. */
export function createCollectionsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async list(projectId: string): Promise<CollectionRow[]> {
      return db.selectFrom('collections').selectAll().where('project_id', '=', projectId).orderBy('name').execute()
    },
    /** Collections of every project whose indexes were built with an older layout (start-up upgrade). */
    async listBelowLayout(layout: number): Promise<CollectionRow[]> {
      return db
        .selectFrom('collections')
        .selectAll()
        .where('index_layout', '<', layout)
        .orderBy('project_id')
        .orderBy('name')
        .execute()
    },
    async find(projectId: string, name: string): Promise<CollectionRow | undefined> {
      return db
        .selectFrom('collections')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .executeTakeFirst()
    },
    /** `executor`: a transaction of the system database to write in. */
    async insert(row: CollectionRow, executor: Kysely<any> = db): Promise<void> {
      await (executor as Kysely<Tables>).insertInto('collections').values(row).execute()
    },
    async update(
      id: string,
      patch: Partial<
        Pick<
          CollectionRow,
          'fields' | 'indexes' | 'index_layout' | 'access_control' | 'schema_version' | 'updated_at' | 'owner_scoped'
        >
      >,
    ): Promise<void> {
      await db.updateTable('collections').set(patch).where('id', '=', id).execute()
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom('collections').where('id', '=', id).execute()
    },
  }
}

export type CollectionsStore = ReturnType<typeof createCollectionsStore>
