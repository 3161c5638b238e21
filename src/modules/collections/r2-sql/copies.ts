import Database from 'better-sqlite3'
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { sql, type Kysely } from 'kysely'
import { openSqlite, type DbHandle } from '../../../lib/db/index.js'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { ObjectStorage } from '../../../lib/storage/index.js'
import type { R2SqlRef } from './types.js'

/** An open SQLite copy of a collection's file: a working copy or a published version. */
export interface Copy {
  readonly handle: DbHandle
  readonly root: Kysely<any>
}

/**
 * Where an r2_sql collection's files are (this instance's working copy, the local cache of published
 * versions, the versions' keys in object storage), and the file work on them: opening, snapshotting a
 * working copy, downloading a version.
 */
export function createR2SqlCopies(root: string, instanceId: string, storage: ObjectStorage) {
  const workFile = (ref: R2SqlRef) => join(root, 'work', instanceId, ref.projectId, `${ref.id}.db`)
  const cacheFile = (ref: R2SqlRef, version: number) => join(root, 'published', ref.projectId, ref.id, `${version}.db`)
  const objectKey = (ref: R2SqlRef, version: number) => `r2-sql/${ref.projectId}/${ref.id}/${version}.db`

  function openCopy(file: string, copy: string, readonly: boolean): Copy {
    const db = openSqlite(file, { readonly })
    return { handle: { kind: 'sqlite', db, schema: null, copy }, root: db }
  }

  const openWork = (ref: R2SqlRef) => openCopy(workFile(ref), `work:${instanceId}`, false)

  /** What moves with every row written (this connection's total_changes) and every schema change. */
  async function markerOf(copy: Copy): Promise<string> {
    const { rows } = await sql<{
      c: number
      s: number
    }>`select total_changes() as c, (select schema_version from pragma_schema_version) as s`.execute(copy.root)
    return `${rows[0]!.c}/${rows[0]!.s}`
  }

  async function baseOf(copy: Copy): Promise<number> {
    const { rows } = await sql<{ user_version: number }>`pragma user_version`.execute(copy.root)
    return Number(rows[0]!.user_version)
  }

  function removeFile(file: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
  }

  /** A consistent copy of the working copy, self-contained (no WAL), labelled with its version: a temp file. */
  async function snapshot(work: Copy, version: number): Promise<{ file: string; sizeBytes: number }> {
    const file = join(root, 'tmp', `${newId()}.db`)
    mkdirSync(dirname(file), { recursive: true })
    await sql`vacuum into ${file}`.execute(work.root)
    const raw = new Database(file)
    try {
      raw.pragma('journal_mode = DELETE')
      raw.pragma(`user_version = ${version}`)
    } finally {
      raw.close()
    }
    return { file, sizeBytes: statSync(file).size }
  }

  /** The published file of a version in the local cache, downloaded if absent (temp file, then renamed: other instances may share the cache). */
  async function fetchVersion(ref: R2SqlRef, version: number): Promise<string> {
    const file = cacheFile(ref, version)
    if (existsSync(file)) return file
    const body = await storage.get(objectKey(ref, version))
    if (!body)
      throw new AppError(
        'service_unavailable',
        'The published file of this collection is missing from object storage',
        { version },
      )
    const tmp = join(root, 'tmp', `${newId()}.db`)
    mkdirSync(dirname(tmp), { recursive: true })
    try {
      await pipeline(body, createWriteStream(tmp))
      mkdirSync(dirname(file), { recursive: true })
      renameSync(tmp, file)
    } catch (err) {
      rmSync(tmp, { force: true })
      throw err
    }
    return file
  }

  return { workFile, cacheFile, objectKey, openCopy, openWork, markerOf, baseOf, removeFile, snapshot, fetchVersion }
}
