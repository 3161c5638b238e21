import { createHash } from 'node:crypto'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import { checkFilename, checkMimeType } from './checks.js'
import { checkContainerSize, checkContainerType, containerOf, containerOfFile } from './container-rules.js'
import type { FilesContext } from './context.js'
import { limits, originalKey, ownerOf, prefixOf, type FileRow, type FileWire, type Visibility } from './model.js'
import type { UploadCommit } from './upload-commit.js'

/** A new file from bytes in hand (flows): the filename, its type, and the fields the upload routes take. */
export interface BytesUpload {
  filename: string
  mimeType: string
  bytes: Buffer
  visibility?: Visibility
  collectionName?: string
  /** The flow key the new file is written at (unique per project: a file already there makes this throw already_exists). */
  flowKey?: string
  /** A file container of the project (a step's containerId): its types, size, prefix, visibility and storage. */
  containerId?: string
}

/** Files from bytes in hand (flows' file_upload, file_transform, render_lens_template): new files and replacements. */
export function createBytesIngest(ctx: FilesContext, commit: UploadCommit) {
  const { access } = ctx
  const { forget, commitUpload, commitReplace } = commit

  return {
    /**
     * A new file from bytes in hand (flows' file_upload and file_transform), with the proxy upload's rules:
     * an uploader, the collection visible to the caller, the project quota; complete at once, file.upload
     * published with `via: "flow"`. With `flowKey`, the row holds that key; a file already holding it makes
     * this throw already_exists (the unique index), the caller's cue to replace it instead. Nothing stays
     * stored when it fails: the object is written at the new file's own key first and removed if the row
     * cannot be. With `containerId`, the container's rules and storage apply, as for the proxy upload.
     * Throws unauthorized, invalid_request, limit_exceeded, already_exists, forbidden (a refused endpoint).
     */
    async uploadBytes(principal: Principal, input: BytesUpload): Promise<FileWire> {
      const owner = ownerOf(principal)
      if (owner === null) throw new AppError('unauthorized', 'Sign in to upload files')
      const filename = checkFilename(input.filename, 'key')
      const mimeType = checkMimeType(input.mimeType, 'contentType')
      if (input.bytes.length === 0) throw new AppError('invalid_request', 'The content is empty', { field: 'content' })
      if (input.bytes.length > limits.maxProxyBytes)
        throw new AppError('limit_exceeded', `A file stored by a flow may be at most ${limits.maxProxyBytes} bytes`, {
          limit: limits.maxProxyBytes,
        })
      const projectId = principal.projectId
      const collection = await ctx.checkCollection(principal, input.collectionName)
      const container = await containerOf(ctx, projectId, input.containerId, mimeType, {
        container: 'containerId',
        type: 'contentType',
      })
      if (container) checkContainerSize(container, input.bytes.length)
      const place = await ctx.placement.placeFor(projectId, container, 'containerId')
      if (place.storageConnectionId === null) await ctx.assertQuota(projectId, input.bytes.length)
      const id = newId()
      const key = originalKey(projectId, id, filename, undefined, container?.prefix)
      const { storage } = place
      await storage.put(key, input.bytes, { contentType: mimeType, sizeBytes: input.bytes.length })
      try {
        const sha256 = createHash('sha256').update(input.bytes).digest('hex')
        return await commitUpload(
          principal,
          owner,
          {
            id,
            key,
            place,
            filename,
            mimeType,
            sizeBytes: input.bytes.length,
            sha256,
            visibility: input.visibility ?? container?.visibility ?? 'public',
            collection,
            flowKey: input.flowKey,
            ...(container ? { containerId: container.id } : {}),
          },
          'flow',
        )
      } catch (err) {
        await forget(storage, key)
        throw err
      }
    },

    /**
     * Replaces a file's bytes with bytes in hand (flows), with replace's rules: seen by the caller, complete,
     * inside its update grant's item_filter, within the quota, its container's types and size, where its
     * bytes live. Throws not_found, forbidden, invalid_request, limit_exceeded, service_unavailable, conflict.
     */
    async replaceBytes(
      principal: Principal,
      id: string,
      input: { bytes: Buffer; mimeType: string },
    ): Promise<FileWire> {
      const row: FileRow = await access.visible(principal, id)
      if (row.status !== 'complete')
        throw new AppError('invalid_request', 'This upload was never completed; confirm it before replacing it')
      await access.assertInScope(principal, row, 'update')
      const mimeType = checkMimeType(input.mimeType, 'contentType')
      if (input.bytes.length === 0)
        throw new AppError('invalid_request', 'The replacement is empty', { field: 'content' })
      if (input.bytes.length > limits.maxProxyBytes)
        throw new AppError('limit_exceeded', `A file stored by a flow may be at most ${limits.maxProxyBytes} bytes`, {
          limit: limits.maxProxyBytes,
        })
      const container = await containerOfFile(ctx, row)
      if (container) {
        checkContainerType(container, mimeType, 'contentType')
        checkContainerSize(container, input.bytes.length)
      }
      if ((row.storage_connection_id ?? null) === null)
        await ctx.assertQuota(row.project_id, input.bytes.length, row.size_bytes)
      const storage = await ctx.placement.storageOf(row)
      const key = originalKey(row.project_id, row.id, row.filename, newId().slice(0, 12), prefixOf(row))
      await storage.put(key, input.bytes, { contentType: mimeType, sizeBytes: input.bytes.length })
      const sha256 = createHash('sha256').update(input.bytes).digest('hex')
      return commitReplace(row, storage, { key, mimeType, sizeBytes: input.bytes.length, sha256 })
    },
  }
}
