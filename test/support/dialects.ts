import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { createPgPool, openPostgres, openSqlite } from '../../src/lib/db/index.js'
import type { DbKind } from '../../src/lib/db/index.js'
import { createTestDatabase, testDatabaseUrl } from './postgres.js'

export interface DialectFixture {
  kind: DbKind
  db: Kysely<any>
  /** For PostgreSQL, the URL of the fresh database; for SQLite, the temporary directory. */
  location: string
  close(): Promise<void>
}

/** The dialects a db-level test runs on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function dialects(): DbKind[] {
  return testDatabaseUrl() ? ['sqlite', 'postgres'] : ['sqlite']
}

/** A fresh, empty database of the given kind. */
export async function openFixture(kind: DbKind): Promise<DialectFixture> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-db-'))
    const db = openSqlite(join(dir, 'test.db'))
    return {
      kind,
      db,
      location: dir,
      async close() {
        await db.destroy()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const database = await createTestDatabase(testDatabaseUrl()!)
  const db = openPostgres(createPgPool(database.url, () => {}))
  return {
    kind,
    db,
    location: database.url,
    async close() {
      await db.destroy()
      await database.drop()
    },
  }
}
