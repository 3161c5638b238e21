import type { Kysely } from 'kysely'
import { projectRows } from '../../lib/db/project-rows.js'

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
  const rows = projectRows<ContainerRow>(db, 'file_containers')
  return {
    ...rows,
    /** A page in name order. */
    list(projectId: string, page: number, limit: number) {
      return rows.list(projectId, page, limit, ['name'])
    },
  }
}

export type ContainersStore = ReturnType<typeof createContainersStore>
