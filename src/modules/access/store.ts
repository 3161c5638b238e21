import type { Kysely, Transaction } from 'kysely'

export interface RoleRow {
  id: string
  project_id: string
  name: string
  description: string
  admin_access: boolean | number
  built_in: boolean | number
  created_at: number
  updated_at: number
}

export interface GrantRow {
  id: string
  role_id: string
  position: number
  resource: string
  action: string
  item_filter: string | null
  fields: string | null
}

type Tables = { roles: RoleRow; grants: GrantRow }
type Db = Kysely<Tables> | Transaction<Tables>

/** SQL for `roles` and `grants`; this module is their only owner. */
export function createAccessStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  return {
    db,
    async rolesOf(projectId: string): Promise<RoleRow[]> {
      return db
        .selectFrom('roles')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('created_at')
        .orderBy('name')
        .execute()
    },
    async grantsOf(roleIds: string[]): Promise<GrantRow[]> {
      if (roleIds.length === 0) return []
      return db
        .selectFrom('grants')
        .selectAll()
        .where('role_id', 'in', roleIds)
        .orderBy('role_id')
        .orderBy('position')
        .execute()
    },
    async roleById(id: string): Promise<RoleRow | undefined> {
      return db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst()
    },
    async insertRole(row: RoleRow, trx: Db = db): Promise<void> {
      await trx.insertInto('roles').values(row).execute()
    },
    async updateRole(
      id: string,
      patch: Partial<Pick<RoleRow, 'name' | 'description' | 'admin_access' | 'updated_at'>>,
    ): Promise<void> {
      await db.updateTable('roles').set(patch).where('id', '=', id).execute()
    },
    /** Throws conflict (a foreign key in `users`) while the role is assigned to anyone. */
    async deleteRole(id: string): Promise<void> {
      await db.deleteFrom('roles').where('id', '=', id).execute()
    },
    async replaceGrants(roleId: string, grants: GrantRow[], trx: Db = db): Promise<void> {
      await trx.deleteFrom('grants').where('role_id', '=', roleId).execute()
      if (grants.length > 0) await trx.insertInto('grants').values(grants).execute()
    },
    /** Deletes these roles' grants on exactly this resource; returns how many. */
    async deleteGrantsOn(roleIds: string[], resource: string): Promise<number> {
      if (roleIds.length === 0) return 0
      const result = await db
        .deleteFrom('grants')
        .where('role_id', 'in', roleIds)
        .where('resource', '=', resource)
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },
    /** Rewrites one grant's row filter and field list (a renamed field, decision 062). */
    async updateGrantRules(id: string, patch: Pick<GrantRow, 'item_filter' | 'fields'>): Promise<void> {
      await db.updateTable('grants').set(patch).where('id', '=', id).execute()
    },
    transaction<T>(run: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
      return db.transaction().execute(run)
    },
  }
}

export type AccessStore = ReturnType<typeof createAccessStore>
