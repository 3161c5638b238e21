import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { lockTransaction, type DbKind } from '../../lib/db/index.js'
import { AppError, isAppError } from '../../lib/errors.js'
import type { EventBus } from '../../lib/events/index.js'
import type { Logger } from '../../lib/log.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { AccessService } from '../access/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { Container } from '../containers/index.js'
import type { RecordEvents } from '../records/index.js'
import type { SettingsService } from '../settings/index.js'
import { createFileAccess, type FileAccess } from './access.js'
import type { FileEvents } from './events.js'
import { isResizable, limits, parseVariants, SYSTEM_COLLECTION, type FileRow } from './model.js'
import { createPlacement, type BucketStorageOf, type FilesPlacement } from './placement.js'
import { createFilesStore, type FilesStore } from './store.js'
import { createVariants, type Variants } from './variants.js'

export interface FilesDeps {
  systemDb: Kysely<any>
  systemKind: DbKind
  storage: ObjectStorage
  access: AccessService
  collections: CollectionsService
  settings: SettingsService
  events: EventBus<FileEvents & RecordEvents>
  /** Which of these file ids a record of the project still holds in a file field (the records module answers). */
  referencedFiles: (projectId: string, ids: readonly string[]) => Promise<ReadonlySet<string>>
  clock: Clock
  log: Logger
  /** A container's rules by id, unchecked (decision 066); absent: uploads naming a container are refused. */
  containerRules?: (projectId: string, id: string) => Promise<Container | undefined>
  /** A storage connection's bucket, unchecked (decision 067); absent: containers on connections are refused at upload. */
  bucketStorage?: BucketStorageOf
}

/** What every part of the files module shares, built once. */
export interface FilesContext {
  deps: FilesDeps
  store: FilesStore
  access: FileAccess
  variants: Variants
  /** Where files' bytes live: `storageOf(row)` for a file, `placeFor(projectId, container)` for a new one. */
  placement: FilesPlacement
  /** Throws limit_exceeded when adding `adding` bytes (and freeing `freeing`) would pass the project's quota. */
  assertQuota(projectId: string, adding: number, freeing?: number): Promise<void>
  /**
   * Checks the quota for `adding` bytes (with `freeing` given back) and runs `write` (the row that holds
   * them) in one transaction, serialised per project across instances, so concurrent uploads and
   * replacements cannot pass the quota together. Throws limit_exceeded.
   */
  reserve<T>(projectId: string, adding: number, write: (store: FilesStore) => Promise<T>, freeing?: number): Promise<T>
  /** `__system`, or a collection the caller may see. Throws invalid_request. */
  checkCollection(principal: Principal, name: string | undefined): Promise<string>
  /**
   * Removes a file's stored objects, variants first, where they live; throws service_unavailable (the row
   * stays, so a retry can finish) when one cannot be removed. A file whose connection is gone has nothing
   * left to remove (the connection's delete leaves its bucket as it is).
   */
  removeObjects(row: FileRow): Promise<void>
  /** Whether a complete file gets its variants in the background under the project's strategy. */
  variantsOnUpload(row: Pick<FileRow, 'project_id' | 'mime_type'>): Promise<boolean>
}

export function createFilesContext(deps: FilesDeps): FilesContext {
  const store = createFilesStore(deps.systemDb)
  const placement = createPlacement(deps)

  async function checkQuota(
    from: FilesStore,
    projectId: string,
    adding: number,
    freeing: number,
    quota: number,
  ): Promise<void> {
    const used = await from.usage(projectId, deps.clock.seconds() - limits.uploadUrlSeconds)
    if (used - freeing + adding > quota) {
      throw new AppError('limit_exceeded', `This would pass the project's storage quota of ${quota} bytes`, {
        quotaBytes: quota,
        usedBytes: used,
        requestedBytes: adding,
      })
    }
  }
  const variants = createVariants({
    store,
    storageOf: placement.storageOf,
    settings: deps.settings,
    log: deps.log,
    containerSizes: async (projectId, id) => (await deps.containerRules?.(projectId, id))?.imageSizes,
  })
  return {
    deps,
    store,
    access: createFileAccess(deps.access, store),
    variants,
    placement,

    async assertQuota(projectId, adding, freeing = 0) {
      await checkQuota(store, projectId, adding, freeing, await deps.settings.get(projectId, 'files.quotaBytes'))
    },

    async reserve(projectId, adding, write, freeing = 0) {
      // Read before the transaction: on SQLite a settings query inside it would wait for its own connection.
      const quota = await deps.settings.get(projectId, 'files.quotaBytes')
      return deps.systemDb.transaction().execute(async (trx) => {
        await lockTransaction(trx, deps.systemKind, `files-quota:${projectId}`)
        const inTransaction = createFilesStore(trx)
        await checkQuota(inTransaction, projectId, adding, freeing, quota)
        return write(inTransaction)
      })
    },

    async checkCollection(principal, name) {
      if (name === undefined || name === SYSTEM_COLLECTION) return SYSTEM_COLLECTION
      try {
        return (await deps.collections.visible(principal, name)).name
      } catch (err) {
        if (!isAppError(err) || err.code !== 'collection_not_found') throw err
        throw new AppError('invalid_request', `collection_name: no collection "${name.slice(0, 60)}"`, {
          field: 'collection_name',
        })
      }
    },

    async removeObjects(row) {
      const keys = [...Object.values(parseVariants(row.variants).items).map((v) => v.key), row.r2_key]
      if (row.upload_key !== null && row.upload_key !== row.r2_key) keys.push(row.upload_key)
      const storage = await placement.placedStorage(row)
      if (!storage) {
        deps.log.warn(
          { fileId: row.id, storageConnectionId: row.storage_connection_id },
          "a file's storage connection is gone; its row goes without its objects",
        )
        return
      }
      for (const key of keys) {
        try {
          await storage.delete(key)
        } catch (err) {
          deps.log.warn({ err, fileId: row.id }, 'could not remove a file object')
          throw new AppError(
            'service_unavailable',
            'The file could not be removed from storage; it is still there, try again',
            { fileId: row.id },
          )
        }
      }
    },

    async variantsOnUpload(row) {
      return (
        isResizable(row.mime_type) && (await deps.settings.get(row.project_id, 'files.strategy')) === 'store_on_upload'
      )
    },
  }
}
