import { resolve } from 'node:path'
import { settings } from '../../config.js'

/** What backup and restore read of the server's settings (from the CLI's environment, as `serve` would). */
export interface BackupSettings {
  readonly dataDir: string
  readonly postgres: boolean
  readonly s3: boolean
  readonly envSecretKey: string | undefined
}

export function backupSettings(env: Record<string, string | undefined>): BackupSettings {
  return {
    dataDir: resolve(env.DATA_DIR?.trim() || settings.DATA_DIR.default),
    postgres: (env.DATABASE_URL?.trim() ?? '') !== '',
    s3: (env.S3_ENDPOINT?.trim() ?? '') !== '',
    envSecretKey: env.SECRET_KEY?.trim() || undefined,
  }
}

/** What `plinth backup` and `plinth restore` answer on PostgreSQL (exit 1). */
export const postgresRefusal = `DATABASE_URL is set: the databases are on PostgreSQL, which plinth backup does not copy.
Use pg_dump and pg_restore, and copy the secret key and the files as docs/running.md ("Backup and restore") says.`
