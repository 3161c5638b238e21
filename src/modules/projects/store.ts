import type { Kysely } from 'kysely'

export interface ProjectRow {
  id: string
  name: string
  is_default: boolean | number
  created_at: number
  updated_at: number
}

export interface Project {
  id: string
  name: string
  isDefault: boolean
  createdAt: number
  updatedAt: number
}

type Tables = { projects: ProjectRow }

/** SQL for the `projects` system table; this module is its only owner. */
export function createProjectsStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    async findDefault(): Promise<Project | null> {
      const row = await db.selectFrom('projects').selectAll().where('is_default', '=', true).executeTakeFirst()
      return row ? toProject(row) : null
    },
    async findById(id: string): Promise<Project | null> {
      const row = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst()
      return row ? toProject(row) : null
    },
    async list(): Promise<Project[]> {
      const rows = await db
        .selectFrom('projects')
        .selectAll()
        .orderBy('is_default', 'desc')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
      return rows.map(toProject)
    },
    async insert(project: Project): Promise<void> {
      await db
        .insertInto('projects')
        .values({
          id: project.id,
          name: project.name,
          is_default: project.isDefault,
          created_at: project.createdAt,
          updated_at: project.updatedAt,
        })
        .execute()
    },
  }
}

export type ProjectsStore = ReturnType<typeof createProjectsStore>

function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    isDefault: Boolean(row.is_default),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
