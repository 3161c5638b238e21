import { sql, type CompiledQuery, type Kysely, type Transaction } from 'kysely'
import { runCompiled } from '../../lib/db/index.js'

export interface UserRow {
  id: string
  project_id: string
  role_id: string
  email: string | null
  username: string | null
  name: string
  password_hash: string | null
  banned: boolean | number
  totp_secret: string | null
  totp_enabled: boolean | number
  email_trusted: boolean | number
  created_at: number
  updated_at: number
  last_sign_in_at: number | null
}

/** What a relation to users may show of an account: its public profile, and its email to those who may read users. */
export type ProfileRow = Pick<UserRow, 'id' | 'name' | 'email'>

type Tables = { users: UserRow }
export type UsersDb = Kysely<Tables> | Transaction<Tables>

/** SQL for the `users` table; this module is its only owner. */
export function createUsersStore(systemDb: Kysely<any>) {
  const db = systemDb as Kysely<Tables>
  const byIdQuery = db.selectFrom('users').selectAll().where('id', '=', '').compile()
  return {
    db,
    transaction<T>(run: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
      return db.transaction().execute(run)
    },
    /** Every flow run reads its publisher here (decision 045): the statement is built once and only bound per call. */
    async byId(id: string): Promise<UserRow | undefined> {
      const rows = await runCompiled<UserRow>(db, { ...byIdQuery, parameters: [id] } as CompiledQuery<UserRow>)
      return rows[0]
    },
    async byEmail(email: string, trx: UsersDb = db): Promise<UserRow[]> {
      return trx.selectFrom('users').selectAll().where('email', '=', email).orderBy('created_at').limit(20).execute()
    },
    async byUsername(username: string, trx: UsersDb = db): Promise<UserRow | undefined> {
      return trx.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst()
    },
    async count(trx: UsersDb = db): Promise<number> {
      const row = await trx.selectFrom('users').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
      return Number(row.n)
    },
    async page(projectId: string, offset: number, limit: number): Promise<{ rows: UserRow[]; total: number }> {
      const [rows, total] = await Promise.all([
        db
          .selectFrom('users')
          .selectAll()
          .where('project_id', '=', projectId)
          .orderBy('created_at')
          .orderBy('id')
          .offset(offset)
          .limit(limit)
          .execute(),
        db
          .selectFrom('users')
          .select(sql<number>`count(*)`.as('n'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow(),
      ])
      return { rows, total: Number(total.n) }
    },
    /** The project's users among these ids (public profile columns and email), in chunks of 500. */
    async profiles(projectId: string, ids: readonly string[]): Promise<ProfileRow[]> {
      const out: ProfileRow[] = []
      for (let at = 0; at < ids.length; at += 500) {
        const chunk = ids.slice(at, at + 500)
        out.push(
          ...(await db
            .selectFrom('users')
            .select(['id', 'name', 'email'])
            .where('project_id', '=', projectId)
            .where('id', 'in', chunk)
            .execute()),
        )
      }
      return out
    },
    /** The project's first `limit` users by id (public profile columns and email). */
    async profilePage(projectId: string, limit: number): Promise<ProfileRow[]> {
      return db
        .selectFrom('users')
        .select(['id', 'name', 'email'])
        .where('project_id', '=', projectId)
        .orderBy('id')
        .limit(limit)
        .execute()
    },
    async insert(row: UserRow, trx: UsersDb = db): Promise<void> {
      await trx.insertInto('users').values(row).execute()
    },
    async update(id: string, patch: Partial<Omit<UserRow, 'id' | 'project_id' | 'created_at'>>): Promise<void> {
      await db.updateTable('users').set(patch).where('id', '=', id).execute()
    },
    async delete(id: string): Promise<void> {
      await db.deleteFrom('users').where('id', '=', id).execute()
    },
  }
}

export type UsersStore = ReturnType<typeof createUsersStore>
