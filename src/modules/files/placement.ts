import { AppError } from '../../lib/errors.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { Container } from '../containers/index.js'
import type { FileRow } from './model.js'

/** A connection's bucket as object storage, and the bucket's name (the storage connections module answers). */
export type BucketStorageOf = (
  projectId: string,
  connectionId: string,
  bucketName: string | null,
) => Promise<{ storage: ObjectStorage; bucketName: string } | undefined>

/** Where a new file's bytes go: the storage, and what its row remembers of it. */
export interface Placement {
  storage: ObjectStorage
  storageConnectionId: string | null
  bucketName: string | null
}

/** The columns of a file row that say where its bytes live. */
export type PlacedRow = Pick<FileRow, 'id' | 'project_id' | 'storage_connection_id' | 'bucket_name'>

/**
 * Where files' bytes live (decision 067): the instance's storage, or the bucket of the storage connection
 * a file's row names. A file's place is fixed when it is stored; every read, replace and removal goes there.
 */
export function createPlacement(deps: { storage: ObjectStorage; bucketStorage?: BucketStorageOf }) {
  const instance: Placement = { storage: deps.storage, storageConnectionId: null, bucketName: null }

  /** The storage a file's bytes live in; undefined when its connection is gone. Throws forbidden (a refused endpoint). */
  async function placedStorage(row: PlacedRow): Promise<ObjectStorage | undefined> {
    const connectionId = row.storage_connection_id ?? null
    if (connectionId === null) return deps.storage
    return (await deps.bucketStorage?.(row.project_id, connectionId, row.bucket_name ?? null))?.storage
  }

  return {
    placedStorage,

    /** The storage a file's bytes live in. Throws service_unavailable (its connection is gone), forbidden (a refused endpoint). */
    async storageOf(row: PlacedRow): Promise<ObjectStorage> {
      const storage = await placedStorage(row)
      if (!storage)
        throw new AppError('service_unavailable', "The storage connection holding this file's bytes no longer exists", {
          fileId: row.id,
          storageConnectionId: row.storage_connection_id,
        })
      return storage
    },

    /**
     * Where an upload into `container` goes (none: the instance's storage). A container's connection is
     * looked up in the uploader's project: one deleted since the container was saved (or another project's)
     * is invalid_request naming container_id, before a byte is stored. Throws forbidden (a refused endpoint).
     */
    async placeFor(projectId: string, container: Container | undefined, field = 'container_id'): Promise<Placement> {
      const connectionId = container?.storageConnectionId ?? null
      if (connectionId === null) return instance
      const found = await deps.bucketStorage?.(projectId, connectionId, container?.bucketName ?? null)
      if (!found)
        throw new AppError(
          'invalid_request',
          `${field}: the storage connection of the container "${container!.name}" no longer exists; choose another for it`,
          { field },
        )
      return { storage: found.storage, storageConnectionId: connectionId, bucketName: found.bucketName }
    },

    /** The instance's own storage, where files outside containers on connections go. */
    instance,
  }
}

export type FilesPlacement = ReturnType<typeof createPlacement>
