import { sql, type Kysely } from 'kysely'
import type { DbKind } from './handle.js'

/** A numbered schema change. Once shipped, a migration is never edited: add the next number. */
export interface Migration {
  readonly name: string
  up(db: Kysely<any>, kind: DbKind): Promise<void>
}

const table = 'plinth_migrations'

/**
 * Applies the pending migrations in order, each in its own transaction, and returns the names applied.
 * On PostgreSQL an advisory lock makes concurrent instances wait for each other instead of racing.
 * Throws when the database holds migrations this build does not know (it is newer than the code).
 */
export async function runMigrations(
  db: Kysely<any>,
  kind: DbKind,
  migrations: readonly Migration[],
): Promise<string[]> {
  assertOrdered(migrations)
  await db.transaction().execute(async (trx) => {
    await lock(trx, kind)
    await trx.schema
      .createTable(table)
      .ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute()
  })

  const known = new Set(migrations.map((m) => m.name))
  const applied = await db.selectFrom(table).select('name').execute()
  const unknown = applied.map((r) => r.name as string).filter((n) => !known.has(n))
  if (unknown.length > 0) {
    throw new Error(`The database has migrations this build does not know (${unknown.join(', ')}); run a newer Plinth`)
  }

  const done: string[] = []
  for (const migration of migrations) {
    const ran = await db.transaction().execute(async (trx) => {
      await lock(trx, kind)
      const exists = await trx.selectFrom(table).select('name').where('name', '=', migration.name).executeTakeFirst()
      if (exists) return false
      await migration.up(trx, kind)
      await trx
        .insertInto(table)
        .values({ name: migration.name, applied_at: Math.floor(Date.now() / 1000) })
        .execute()
      return true
    })
    if (ran) done.push(migration.name)
  }
  return done
}

// SQLite needs no lock: its writers are serialised by the database file itself.
async function lock(trx: Kysely<any>, kind: DbKind): Promise<void> {
  if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`plinth:${table}`}))`.execute(trx)
}

function assertOrdered(migrations: readonly Migration[]): void {
  for (let i = 1; i < migrations.length; i++) {
    const prev = migrations[i - 1]!.name
    const name = migrations[i]!.name
    if (!(prev < name)) throw new Error(`Migrations out of order or duplicated: ${prev} before ${name}`)
  }
}
