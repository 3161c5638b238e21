import type { Kysely } from 'kysely'
import { lockTransaction, type DbKind } from '../../lib/db/index.js'

export interface NavigationRow {
  id: string
  project_id: string
  label: string
  icon: string | null
  target_kind: string
  target_ref: string
  parent_id: string | null
  sort_order: number
  created_by: string | null
  created_at: number
  updated_at: number
}

export type NavigationChanges = Partial<
  Pick<NavigationRow, 'label' | 'icon' | 'target_kind' | 'target_ref' | 'parent_id' | 'sort_order' | 'updated_at'>
>

type Tables = { navigation_items: NavigationRow }

/** Writes of one project's tree, inside its lock: they read the whole tree, check it, then change it. */
export interface NavigationWriter {
  all(): Promise<NavigationRow[]>
  insert(row: NavigationRow): Promise<void>
  update(id: string, changes: NavigationChanges): Promise<void>
  delete(id: string): Promise<void>
}

/** SQL for `navigation_items`; this module is its only owner. Every function takes the project first. */
export function createNavigationStore(systemDb: Kysely<any>, dbKind: DbKind) {
  const db = systemDb as Kysely<Tables>
  const allOf = (q: Kysely<Tables>, projectId: string) =>
    q
      .selectFrom('navigation_items')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('sort_order')
      .orderBy('id')
      .execute()
  return {
    /** Every item of the project, by sortOrder then id. */
    all: (projectId: string) => allOf(db, projectId),

    async page(projectId: string, page: number, limit: number): Promise<{ rows: NavigationRow[]; total: number }> {
      const base = db.selectFrom('navigation_items').where('project_id', '=', projectId)
      const [rows, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('sort_order')
          .orderBy('id')
          .limit(limit)
          .offset((page - 1) * limit)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
      ])
      return { rows, total: Number(count?.n ?? 0) }
    },

    async byId(projectId: string, id: string): Promise<NavigationRow | undefined> {
      return db
        .selectFrom('navigation_items')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst()
    },

    /**
     * Runs `work` in one transaction holding the project's navigation lock, so two writers never check the
     * tree against the same old state (two moves that each look fine could together make a cycle). A throw
     * rolls everything back: a reorder applies whole or not at all.
     */
    async write<T>(projectId: string, work: (writer: NavigationWriter) => Promise<T>): Promise<T> {
      return db.transaction().execute(async (trx) => {
        await lockTransaction(trx, dbKind, `navigation:${projectId}`)
        return work({
          all: () => allOf(trx, projectId),
          insert: async (row) => {
            await trx.insertInto('navigation_items').values(row).execute()
          },
          update: async (id, changes) => {
            await trx
              .updateTable('navigation_items')
              .set(changes)
              .where('project_id', '=', projectId)
              .where('id', '=', id)
              .execute()
          },
          delete: async (id) => {
            await trx.deleteFrom('navigation_items').where('project_id', '=', projectId).where('id', '=', id).execute()
          },
        })
      })
    },
  }
}

export type NavigationStore = ReturnType<typeof createNavigationStore>
