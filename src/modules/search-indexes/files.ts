import Database from 'better-sqlite3'
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import { readMeta, type FileMeta } from './compile.js'

const contentType = 'application/vnd.sqlite3'
/** Built files kept open per instance; the least recently used one beyond this is closed and its copy removed. */
const maxOpen = 16

export interface OpenIndexFile {
  readonly db: Database.Database
  readonly meta: FileMeta
}

/** Where a build's file lives in object storage. */
export function objectKey(projectId: string, indexId: string, buildId: string): string {
  return `search-indexes/${projectId}/${indexId}/${buildId}.db`
}

/**
 * Index files: uploaded to object storage when built, and read by queries from a copy on this
 * instance's disk (`DATA_DIR/search-indexes/cache/<build id>.db`), downloaded once per build. A build id
 * is never reused, so a copy never goes out of date: a new build is a new file.
 */
export function createIndexFiles(deps: { storage: ObjectStorage; dataDir: string; log: Logger }) {
  const root = join(deps.dataDir, 'search-indexes')
  const cacheFile = (buildId: string) => join(root, 'cache', `${buildId}.db`)
  const open = new Map<string, OpenIndexFile>()
  const opening = new Map<string, Promise<OpenIndexFile | null>>()

  function remember(buildId: string, file: OpenIndexFile): OpenIndexFile {
    open.delete(buildId)
    open.set(buildId, file)
    while (open.size > maxOpen) {
      const [oldest] = open.keys()
      forgetLocal(oldest!)
    }
    return file
  }

  function forgetLocal(buildId: string): void {
    const file = open.get(buildId)
    open.delete(buildId)
    file?.db.close()
    rmSync(cacheFile(buildId), { force: true })
  }

  async function load(projectId: string, indexId: string, buildId: string): Promise<OpenIndexFile | null> {
    const local = cacheFile(buildId)
    if (!existsSync(local)) {
      const body = await deps.storage.get(objectKey(projectId, indexId, buildId))
      if (!body) return null
      const tmp = join(root, 'tmp', `${newId()}.db`)
      mkdirSync(join(root, 'tmp'), { recursive: true })
      mkdirSync(join(root, 'cache'), { recursive: true })
      try {
        await pipeline(body, createWriteStream(tmp))
        renameSync(tmp, local)
      } catch (err) {
        rmSync(tmp, { force: true })
        throw err
      }
    }
    const db = new Database(local, { readonly: true, fileMustExist: true })
    try {
      return remember(buildId, { db, meta: readMeta(db) })
    } catch (err) {
      db.close()
      throw err
    }
  }

  return {
    /** A temp file for a build to be written to. */
    tempFile(): string {
      mkdirSync(join(root, 'tmp'), { recursive: true })
      return join(root, 'tmp', `${newId()}.db`)
    },

    /** Uploads a compiled file and keeps it as this instance's copy of the build; answers its size. */
    async publish(projectId: string, indexId: string, buildId: string, file: string): Promise<number> {
      const sizeBytes = statSync(file).size
      await deps.storage.put(objectKey(projectId, indexId, buildId), createReadStream(file), { contentType, sizeBytes })
      mkdirSync(join(root, 'cache'), { recursive: true })
      renameSync(file, cacheFile(buildId))
      return sizeBytes
    },

    /**
     * The built file of a build, opened read-only (downloaded first if this instance has no copy). Throws
     * service_unavailable when object storage no longer holds it.
     */
    async open(projectId: string, indexId: string, buildId: string): Promise<OpenIndexFile> {
      const known = open.get(buildId)
      if (known) return remember(buildId, known)
      let pending = opening.get(buildId)
      if (!pending) {
        pending = load(projectId, indexId, buildId).finally(() => opening.delete(buildId))
        opening.set(buildId, pending)
      }
      const file = await pending
      if (!file)
        throw new AppError(
          'service_unavailable',
          'The built file of this search index is missing from object storage; rebuild it',
        )
      return file
    },

    /** Removes a build's file from object storage and from this instance. */
    async remove(projectId: string, indexId: string, buildId: string): Promise<void> {
      forgetLocal(buildId)
      await deps.storage
        .delete(objectKey(projectId, indexId, buildId))
        .catch((err: unknown) => deps.log.warn({ err, indexId, buildId }, 'removing a search index file failed'))
    },

    /** Removes a temp file a build left. */
    discard(file: string): void {
      rmSync(file, { force: true })
    },

    /** Closes every open file (copies stay on disk for the next start). */
    close(): void {
      for (const file of open.values()) file.db.close()
      open.clear()
    },
  }
}

export type IndexFiles = ReturnType<typeof createIndexFiles>
