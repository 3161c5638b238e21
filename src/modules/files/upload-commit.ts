import { AppError, isAppError } from '../../lib/errors.js'
import { principalSnapshot } from '../../lib/events/index.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { FilesContext } from './context.js'
import type { FileUploadEvent } from './events.js'
import { emptyVariants, parseVariants, toWire, type FileRow, type FileWire, type Visibility } from './model.js'
import type { Placement } from './placement.js'

/** The bytes of a new file, already stored at `key` in `place`, and the row's other fields. */
export interface NewFile {
  id: string
  key: string
  place: Placement
  filename: string
  mimeType: string
  sizeBytes: number
  sha256: string
  visibility: Visibility
  collection: string
  flowKey?: string
  /** The container it was uploaded into (decision 066). */
  containerId?: string
}

/**
 * The last step of every upload that streams through Plinth or comes from a flow: bytes already stored
 * become a file row (or a file's new content) under the project quota, and a failed step leaves no object
 * behind.
 */
export function createUploadCommit(ctx: FilesContext) {
  const { deps, variants } = ctx
  const { log } = deps

  /** Removes the object of a failed upload from `storage`; a storage refusal is logged, not thrown. */
  async function forget(storage: ObjectStorage, key: string | null): Promise<void> {
    if (key === null) return
    try {
      await storage.delete(key)
    } catch (err) {
      log.warn({ err, key }, 'could not remove an object of a failed upload')
    }
  }

  /** Removes the old variants before a replace; throws service_unavailable (the file unchanged) when storage refuses one. */
  async function dropVariants(storage: ObjectStorage, row: FileRow): Promise<void> {
    const removed: string[] = []
    for (const [name, variant] of Object.entries(parseVariants(row.variants).items)) {
      try {
        await storage.delete(variant.key)
        removed.push(name)
      } catch (err) {
        log.warn({ err, fileId: row.id, variant: name }, 'could not remove an old file variant')
        // Those already gone leave the row, so it never points at a missing object.
        if (removed.length > 0) {
          await variants
            .update(row, (state) => ({
              ...state,
              items: Object.fromEntries(Object.entries(state.items).filter(([n]) => !removed.includes(n))),
            }))
            .catch(() => undefined)
        }
        throw new AppError(
          'service_unavailable',
          'The old variants of this file could not be removed; the file was not changed, try again',
          { fileId: row.id },
        )
      }
    }
  }

  /**
   * The row of a new complete file whose bytes are stored at `stored.key`, under the quota when they are in
   * the instance's storage; publishes file.upload.
   */
  async function commitUpload(
    principal: Principal,
    owner: string,
    stored: NewFile,
    via: FileUploadEvent['via'],
  ): Promise<FileWire> {
    const projectId = principal.projectId
    const now = deps.clock.seconds()
    const background = await ctx.variantsOnUpload({ project_id: projectId, mime_type: stored.mimeType })
    const row: FileRow = {
      id: stored.id,
      project_id: projectId,
      collection_name: stored.collection,
      r2_key: stored.key,
      filename: stored.filename,
      mime_type: stored.mimeType,
      size_bytes: stored.sizeBytes,
      sha256: stored.sha256,
      uploaded_by: principal.userId,
      owner,
      visibility: stored.visibility,
      status: 'complete',
      created_at: now,
      updated_at: now,
      variants: emptyVariants(background ? 'pending' : 'none'),
      upload_key: null,
      flow_key: stored.flowKey ?? null,
      ...(stored.containerId === undefined ? {} : { container_id: stored.containerId }),
      storage_connection_id: stored.place.storageConnectionId,
      bucket_name: stored.place.bucketName,
    }
    // Bytes on a storage connection are in the project's own bucket, outside the quota (decision 067).
    if (stored.place.storageConnectionId === null)
      await ctx.reserve(projectId, stored.sizeBytes, (inTransaction) => inTransaction.insert(row))
    else await ctx.store.insert(row)
    const wire = toWire(row)
    deps.events.emit('file.upload', { projectId, file: wire, via, principal: principalSnapshot(principal), at: now })
    if (background) variants.schedule(projectId, stored.id)
    return wire
  }

  /**
   * Switches `row` over to the new bytes already stored at `stored.key` in `storage` (where the file's bytes
   * live): quota checked (instance storage), old variants removed, row switched, old object removed. On
   * failure the new bytes are removed and the file keeps its old ones.
   */
  async function commitReplace(
    row: FileRow,
    storage: ObjectStorage,
    stored: { key: string; mimeType: string; sizeBytes: number; sha256: string },
  ): Promise<FileWire> {
    let updated: FileRow | undefined
    const counted = (row.storage_connection_id ?? null) === null
    try {
      // Checked once before the old variants go, so the common refusal leaves the file as it was, and
      // again with the switch under the project's quota lock, so racing replacements cannot both pass.
      if (counted) await ctx.assertQuota(row.project_id, stored.sizeBytes, row.size_bytes)
      await dropVariants(storage, row)
      const background = await ctx.variantsOnUpload({ project_id: row.project_id, mime_type: stored.mimeType })
      const content = {
        r2_key: stored.key,
        mime_type: stored.mimeType,
        size_bytes: stored.sizeBytes,
        sha256: stored.sha256,
        updated_at: deps.clock.seconds(),
        variants: emptyVariants(background ? 'pending' : 'none'),
      }
      try {
        updated = counted
          ? await ctx.reserve(
              row.project_id,
              stored.sizeBytes,
              (inTransaction) => inTransaction.replaceContent(row.project_id, row.id, row.r2_key, content),
              row.size_bytes,
            )
          : await ctx.store.replaceContent(row.project_id, row.id, row.r2_key, content)
      } catch (err) {
        // Lost the race for the last bytes: the old bytes stay, but their variants are gone, so the row
        // must stop listing them (regenerate makes them again).
        if (isAppError(err) && err.code === 'limit_exceeded')
          await variants.update(row, (state) => ({ ...state, status: 'none', items: {} })).catch(() => undefined)
        throw err
      }
      if (!updated) throw new AppError('conflict', 'The file changed or was deleted during the upload; try again')
      if (background) variants.schedule(row.project_id, row.id)
    } catch (err) {
      await forget(storage, stored.key)
      throw err
    }
    await forget(storage, row.r2_key)
    return toWire(updated)
  }

  return { forget, commitUpload, commitReplace }
}

export type UploadCommit = ReturnType<typeof createUploadCommit>
