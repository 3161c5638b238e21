import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { systemMigrations } from '../../migrations/system/index.js'
import { checkDatabase, countDifferences } from './databases.js'
import { copyHashed, hashFile, manifestName, readManifest, type FileEntry, type Manifest } from './manifest.js'
import { secretKeyCheck } from './secret-key.js'
import type { BackupSettings } from './settings.js'
import { BackupError } from './take-backup.js'

/**
 * Restores a backup into an empty DATA_DIR (docs/running.md, "Backup and restore"): checks the manifest,
 * the migration level (not newer than this build) and the secret key, then every file of the backup
 * against its checksum, before writing anything; then copies, and checks the copies (checksums, each
 * database's integrity_check and row counts). On a failure after copying began, DATA_DIR is emptied again.
 * Throws BackupError.
 */
export async function restoreBackup(settings: BackupSettings, backupDir: string): Promise<Manifest> {
  const source = resolve(backupDir)
  const { dataDir } = settings
  let manifest: Manifest
  try {
    manifest = readManifest(join(source, manifestName))
  } catch (err) {
    throw new BackupError((err as Error).message)
  }
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new BackupError(`DATA_DIR (${dataDir}) is not empty: restore only into a new or empty directory`)
  }
  checkMigrationLevel(manifest)
  checkSecretKey(manifest, settings.envSecretKey)

  const entries: FileEntry[] = [...manifest.databases, ...manifest.files]
  const damaged: string[] = []
  for (const entry of entries) {
    const found = await hashOrNull(join(source, entry.path))
    if (!found) damaged.push(`${entry.path}: missing`)
    else if (found.sha256 !== entry.sha256 || found.bytes !== entry.bytes)
      damaged.push(`${entry.path}: checksum differs`)
  }
  if (damaged.length > 0)
    throw new BackupError(`The backup is damaged; nothing was restored:\n  ${damaged.join('\n  ')}`)

  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  try {
    for (const entry of entries) {
      const copied = await copyHashed(
        join(source, entry.path),
        join(dataDir, entry.path),
        entry.path === 'secret.key' ? 0o600 : undefined,
      )
      if (!copied || copied.sha256 !== entry.sha256)
        throw new BackupError(`${entry.path}: the copy differs from the backup`)
    }
    for (const entry of manifest.databases) {
      const check = checkDatabase(join(dataDir, entry.path))
      if (check.problems.length > 0) {
        throw new BackupError(`${entry.path}: integrity_check failed: ${check.problems.join('; ')}`)
      }
      const differences = countDifferences(entry.tables, check.tables)
      if (differences.length > 0) throw new BackupError(`${entry.path}: ${differences.join('; ')}`)
    }
    return manifest
  } catch (err) {
    // DATA_DIR was empty: what is in it now is ours, and a half restore must not be served.
    for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true })
    throw err
  }
}

function checkMigrationLevel(manifest: Manifest): void {
  const known = new Set(systemMigrations.map((m) => m.name))
  const last = manifest.migration.last
  if (last !== null && !known.has(last)) {
    throw new BackupError(
      `The backup was taken by a newer Plinth (${manifest.plinthVersion}, migration ${last}): restore it with that version or a later one`,
    )
  }
}

function checkSecretKey(manifest: Manifest, envKey: string | undefined): void {
  if (manifest.secretKey === 'environment') {
    if (!envKey) {
      throw new BackupError(
        'The backup was taken with SECRET_KEY set in the environment and holds no key: set the same SECRET_KEY and run restore again',
      )
    }
    if (secretKeyCheck(envKey) !== manifest.secretKeyCheck) {
      throw new BackupError('SECRET_KEY is not the key the backup was taken with: set that key and run restore again')
    }
  } else if (envKey && secretKeyCheck(envKey) !== manifest.secretKeyCheck) {
    throw new BackupError(
      "SECRET_KEY is set and differs from the key in the backup (secret.key, which is restored): unset it, or set the backup's key",
    )
  }
}

async function hashOrNull(path: string): Promise<{ bytes: number; sha256: string } | null> {
  try {
    return await hashFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}
