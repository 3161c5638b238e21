import { createHash } from 'node:crypto'
import { AppError } from '../../lib/errors.js'
import { principalSnapshot } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import { checkFilename, checkMimeType } from './checks.js'
import { checkContainerSize, containerOf } from './container-rules.js'
import type { FilesContext } from './context.js'
import {
  emptyVariants,
  limits,
  originalKey,
  ownerOf,
  toWire,
  uploadKey,
  type FileRow,
  type Visibility,
} from './model.js'

export interface UploadTokenInput {
  filename: string
  mime_type: string
  size_bytes: number
  collection_name?: string
  visibility?: Visibility
  /** A file container (decision 066): its types, size, prefix, visibility and variant sizes apply. */
  container_id?: string
}

/** The size and SHA-256 of the object at `key`, read back from storage; null when absent. */
async function measure(storage: ObjectStorage, key: string): Promise<{ sizeBytes: number; sha256: string } | null> {
  const stream = await storage.get(key)
  if (!stream) return null
  const hash = createHash('sha256')
  let sizeBytes = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk)
    sizeBytes += chunk.length
  }
  return { sizeBytes, sha256: hash.digest('hex') }
}

function noBytes(): AppError {
  return new AppError('invalid_request', 'No bytes were uploaded for this file: PUT them to the upload URL first')
}

/**
 * Uploads through a presigned URL (core-api § File endpoints: upload-token, confirm): a file reserved
 * with its announced size, its bytes PUT straight to storage, then measured and confirmed. The permission
 * is the service's to check first (service.ts).
 */
export function createTokenUploads(ctx: FilesContext) {
  const { deps, store, access, variants } = ctx

  return {
    /**
     * Reserves a file and answers a presigned PUT URL (120 s). Throws unauthorized (no uploader),
     * invalid_request (bad field, unknown collection), limit_exceeded (over 100 MB or the project quota).
     */
    async uploadToken(
      principal: Principal,
      input: UploadTokenInput,
    ): Promise<{ id: string; uploadUrl: string; r2Key: string }> {
      const owner = ownerOf(principal)
      if (owner === null) throw new AppError('unauthorized', 'Sign in to upload files')
      const filename = checkFilename(input.filename)
      const mimeType = checkMimeType(input.mime_type)
      if (input.size_bytes > limits.maxFileBytes) {
        throw new AppError('limit_exceeded', `A file may be at most ${limits.maxFileBytes} bytes`, {
          limit: limits.maxFileBytes,
          field: 'size_bytes',
        })
      }
      const collection = await ctx.checkCollection(principal, input.collection_name)
      const projectId = principal.projectId
      // The announced size is what confirm holds the bytes to, so the container's ceiling is checked on it.
      const container = await containerOf(ctx, projectId, input.container_id, mimeType)
      if (container) checkContainerSize(container, input.size_bytes)
      // A container on a storage connection: the URL is its bucket's own. Signing sends nothing, so the
      // bucket is listed once first, as the connection test does (under the outbound rule): a refused
      // endpoint, refused keys or a missing bucket are refused now, not at confirm, and leave no row.
      const place = await ctx.placement.placeFor(projectId, container)
      const id = newId()
      const now = deps.clock.seconds()
      // The URL writes to a key of its own; until confirm, that is where the file's bytes are (r2Key).
      const writeKey = uploadKey(projectId, id, filename)
      if (place.storageConnectionId !== null) await place.storage.list(writeKey, 1)
      const row: FileRow = {
        id,
        project_id: projectId,
        collection_name: collection,
        r2_key: writeKey,
        filename,
        mime_type: mimeType,
        size_bytes: input.size_bytes,
        sha256: null,
        uploaded_by: principal.userId,
        owner,
        visibility: input.visibility ?? container?.visibility ?? 'public',
        status: 'pending',
        created_at: now,
        updated_at: now,
        variants: emptyVariants(),
        upload_key: writeKey,
        flow_key: null,
        ...(container ? { container_id: container.id } : {}),
        storage_connection_id: place.storageConnectionId,
        bucket_name: place.bucketName,
      }
      // The quota counts the instance's storage only (decision 067).
      if (place.storageConnectionId === null)
        await ctx.reserve(projectId, input.size_bytes, (inTransaction) => inTransaction.insert(row))
      else await store.insert(row)
      try {
        const uploadUrl = await place.storage.presignPut(writeKey, {
          contentType: mimeType,
          sizeBytes: input.size_bytes,
          expiresIn: limits.uploadUrlSeconds,
        })
        return { id, uploadUrl, r2Key: row.r2_key }
      } catch (err) {
        await store.remove(projectId, id)
        throw err
      }
    },

    /**
     * Marks an upload complete once its bytes are in storage with the announced size: copies them from the
     * upload URL's key to a key of this confirm's own, which no URL can write to, and records the SHA-256
     * of that copy, so what is served is always what was measured (single-use upload URLs, docs/files.md).
     * Emits file.upload and (store_on_upload) starts the variants. Idempotent. Throws not_found, forbidden
     * (not the uploader, administrators included), invalid_request (no bytes, wrong size).
     */
    async confirm(principal: Principal, id: string): Promise<{ success: true; message: string }> {
      const row = await access.visible(principal, id)
      access.assertOwner(principal, row, 'confirm this upload')
      if (row.status === 'complete') return { success: true, message: 'Upload already confirmed' }
      // Rows reserved before upload URLs had a key of their own are measured where they are.
      const copied = row.upload_key !== null
      // A fresh key per attempt: of two confirms racing a PUT, the loser's copy never replaces what the winner measured.
      const prefix = row.container_id
        ? (await deps.containerRules?.(row.project_id, row.container_id))?.prefix
        : undefined
      const served = copied
        ? originalKey(row.project_id, row.id, row.filename, newId().slice(0, 12), prefix)
        : row.r2_key
      const storage = await ctx.placement.storageOf(row)
      if (copied && !(await storage.copy(row.upload_key!, served))) throw noBytes()
      let updated: FileRow | undefined
      let background: boolean
      try {
        const stored = await measure(storage, served)
        if (!stored) throw noBytes()
        if (stored.sizeBytes !== row.size_bytes) {
          throw new AppError(
            'invalid_request',
            `The stored object is ${stored.sizeBytes} bytes, not the ${row.size_bytes} announced`,
            {
              expected: row.size_bytes,
              received: stored.sizeBytes,
            },
          )
        }
        background = await ctx.variantsOnUpload(row)
        updated = await store.complete(row.project_id, id, {
          r2_key: served,
          sha256: stored.sha256,
          updated_at: deps.clock.seconds(),
          variants: emptyVariants(background ? 'pending' : 'none'),
        })
      } finally {
        if (copied && !updated)
          await storage
            .delete(served)
            .catch((err: unknown) =>
              deps.log.warn({ err, fileId: id }, 'could not remove the copy of an unconfirmed upload'),
            )
      }
      if (!updated) return { success: true, message: 'Upload already confirmed' }
      deps.events.emit('file.upload', {
        projectId: updated.project_id,
        file: toWire(updated),
        via: 'token',
        principal: principalSnapshot(principal),
        at: deps.clock.seconds(),
      })
      if (background) variants.schedule(updated.project_id, updated.id)
      return { success: true, message: 'Upload confirmed' }
    },
  }
}
