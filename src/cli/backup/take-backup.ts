import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { readVersion } from '../../config.js'
import { listDataDir } from './data-dir.js'
import { checkDatabase, countDifferences, migrationLevel, openSnapshot, type Snapshot } from './databases.js'
import {
  copyHashed,
  hashFile,
  manifestName,
  writeManifest,
  type DatabaseEntry,
  type FileEntry,
  type Manifest,
} from './manifest.js'
import { findSecretKey, secretKeyCheck } from './secret-key.js'
import type { BackupSettings } from './settings.js'

/** A backup that cannot be taken, in plain words (the command prints it and exits 1). */
export class BackupError extends Error {}

/**
 * Copies DATA_DIR into `target` while a server may be writing (docs/running.md, "Backup and restore"):
 * 1. system.db is pinned first (a read transaction), then every other database, one right after the other;
 * 2. each is copied with SQLite's backup API from its pinned state, its copy checked (integrity_check, row
 *    counts equal to the pinned state's) and hashed;
 * 3. then the other files (local storage's objects, the secret key) are copied and hashed;
 * 4. the manifest is written last. On any failure `target` is removed: a directory without a manifest is
 *    never left looking like a backup.
 * Throws BackupError.
 */
export async function takeBackup(settings: BackupSettings, targetDir: string): Promise<Manifest> {
  const { dataDir } = settings
  const target = resolve(targetDir)
  if (!existsSync(join(dataDir, 'system.db'))) {
    throw new BackupError(`No Plinth data in ${dataDir} (system.db is missing): set DATA_DIR to the server's`)
  }
  const fromData = relative(dataDir, target)
  if (fromData === '' || (!fromData.startsWith('..') && !isAbsolute(fromData))) {
    throw new BackupError(`The backup directory must be outside DATA_DIR (${dataDir})`)
  }
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new BackupError(`${target} is not empty: give a new or empty directory`)
  }
  const secret = findSecretKey(dataDir, settings.envSecretKey)
  if (!secret) throw new BackupError(`No secret key: SECRET_KEY is unset and ${join(dataDir, 'secret.key')} is missing`)

  mkdirSync(target, { recursive: true, mode: 0o700 })
  const snapshots: Snapshot[] = []
  try {
    snapshots.push(openSnapshot(join(dataDir, 'system.db')))
    const listing = listDataDir(dataDir, target)
    const vanished: string[] = []
    for (const rel of listing.databases) {
      if (rel === 'system.db') continue
      try {
        snapshots.push(openSnapshot(join(dataDir, rel)))
      } catch (err) {
        if (existsSync(join(dataDir, rel))) throw err
        vanished.push(rel) // dropped since it was listed
      }
    }

    const databases: DatabaseEntry[] = []
    for (const snapshot of snapshots) {
      const rel = relative(dataDir, snapshot.path).split(sep).join('/')
      const copy = join(target, rel)
      await snapshot.copyTo(copy)
      snapshot.close()
      const check = checkDatabase(copy)
      if (check.problems.length > 0) {
        throw new BackupError(`${rel}: integrity_check of the copy failed: ${check.problems.join('; ')}`)
      }
      const differences = countDifferences(snapshot.tables, check.tables)
      if (differences.length > 0) throw new BackupError(`${rel}: the copy's rows differ: ${differences.join('; ')}`)
      databases.push({ path: rel, ...(await hashFile(copy)), tables: check.tables })
    }

    const files: FileEntry[] = []
    for (const rel of listing.files) {
      const copied = await copyHashed(join(dataDir, rel), join(target, rel), rel === 'secret.key' ? 0o600 : undefined)
      if (copied) files.push({ path: rel, ...copied })
      else vanished.push(rel)
    }
    if (secret.source === 'file' && !files.some((f) => f.path === 'secret.key')) {
      throw new BackupError(`${join(dataDir, 'secret.key')} disappeared during the backup`)
    }

    const manifest: Manifest = {
      format: 1,
      plinthVersion: readVersion(),
      createdAt: new Date().toISOString(),
      migration: migrationLevel(join(target, 'system.db')),
      secretKey: secret.source,
      secretKeyCheck: secretKeyCheck(secret.key),
      storage: settings.s3 ? 's3' : 'local',
      databases,
      files,
      vanished,
    }
    writeManifest(join(target, manifestName), manifest)
    return manifest
  } catch (err) {
    for (const snapshot of snapshots) {
      try {
        snapshot.close()
      } catch {
        // already closed
      }
    }
    rmSync(target, { recursive: true, force: true })
    throw err
  }
}
