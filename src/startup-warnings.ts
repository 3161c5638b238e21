import type { Config } from './config.js'

/**
 * Settings that start fine but do not do what the deployment looks like it wants; each is one log line
 * at warn level, written once at start-up (docs/configuration.md § Scale-out).
 */
export function startupWarnings(config: Config): string[] {
  const warnings: string[] = []
  // DATABASE_URL and REDIS_URL are what several instances share; files on the local disk are not shared.
  if (config.database.kind === 'postgres' && config.redisUrl !== null && config.storage.kind === 'local') {
    warnings.push(
      "Files are stored on this instance's local disk (DATA_DIR) while DATABASE_URL and REDIS_URL share everything else: " +
        'with more than one instance, a file uploaded through one is missing (404) on the others. ' +
        'Set S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY to keep files in shared object storage, or run a single instance.',
    )
  }
  return warnings
}
