import { boot, type TestAppOptions, type TestServer } from './harness.js'

/**
 * A second Plinth instance beside one `startServer` started: the same PostgreSQL database, SECRET_KEY,
 * REDIS_URL and REDIS_PREFIX (read from the first instance's config), its own DATA_DIR, port and log, and
 * whatever `env` adds (pass the same limits as the first), and its own app `options` (e.g. a load gate).
 * `stop()` leaves the shared database to the first instance, so stop the sibling first.
 */
export function startSibling(
  first: TestServer,
  env: Record<string, string>,
  options: TestAppOptions = {},
): Promise<TestServer> {
  const { database, redisUrl, redisPrefix, secretKey } = first.app.config
  if (database.kind !== 'postgres')
    throw new Error('A sibling instance needs the first one to run on PostgreSQL (TEST_DATABASE_URL)')
  if (!redisUrl) throw new Error('A sibling instance needs the first one to use Redis (REDIS_URL)')
  return boot(
    { ...env, DATABASE_URL: database.url, SECRET_KEY: secretKey, REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix },
    undefined,
    options,
  )
}
