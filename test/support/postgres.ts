import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The PostgreSQL server tests use, or null when the run is SQLite-only. */
export function testDatabaseUrl(): string | null {
  return process.env.TEST_DATABASE_URL || null
}

/**
 * Creates a fresh, empty database on the test server and returns its URL and a drop function.
 * Fails loudly when the server cannot be reached: a PostgreSQL run never skips silently.
 */
export async function createTestDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `plinth_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  try {
    await admin.connect()
  } catch (err) {
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL cannot be reached: ${(err as Error).message}`, {
      cause: err,
    })
  }
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`drop database if exists ${name} with (force)`)
      } finally {
        await client.end()
      }
    },
  }
}
