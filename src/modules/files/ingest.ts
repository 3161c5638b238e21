import type { Readable } from 'node:stream'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { FilesContext } from './context.js'
import {
  clientVariantKey,
  limits,
  originalKey,
  ownerOf,
  prefixOf,
  serverOwnedNames,
  toWire,
  type FileWire,
} from './model.js'
import { readMultipart, type MultipartResult } from './multipart.js'
import { checkFilename, checkMimeType } from './checks.js'
import type { UploadCommit } from './upload-commit.js'
import { loadSharp } from './variants.js'
import { checkContainerType, containerOf, containerOfFile, type Container } from './container-rules.js'
import type { Placement } from './placement.js'

/** A request body as the route hands it over: unread, streaming. */
export interface UploadBody {
  source: AsyncIterable<Uint8Array>
  contentType: string | undefined
  contentLength: number | undefined
}

const variantName = /^[a-z][a-z0-9_-]{0,31}$/
// Room for a File sent back whole as form fields (its server-owned fields are ignored) beside the real ones.
const maxFormFields = 32
// Room for the multipart framing around the file (boundaries, part headers, small fields).
const framingAllowance = 64 * 1024

function refuseLargeBody(body: UploadBody, max: number): void {
  if (body.contentLength !== undefined && body.contentLength > max + framingAllowance) {
    throw new AppError(
      'limit_exceeded',
      `The file is larger than ${max} bytes`,
      { limit: max },
      { headers: { Connection: 'close' } },
    )
  }
}

/** Refuses a form field other than `allowed` ones; server-owned fields (uploadedBy, status, …) are ignored, whatever their value. */
function refuseFields(result: MultipartResult, allowed: readonly string[]): void {
  const unknown = Object.keys(result.fields).filter((f) => !allowed.includes(f) && !serverOwnedNames.includes(f))
  if (unknown.length > 0) {
    const known = allowed.length > 0 ? `; known: file, ${allowed.join(', ')}` : '; send only "file"'
    throw new AppError('invalid_request', `Unknown form field "${unknown[0]!.slice(0, 60)}"${known}`, {
      field: unknown[0]!.slice(0, 60),
    })
  }
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** What an upload's file part is, as the route's target hears of it before storing it. */
interface Incoming {
  filename: string
  mimeType: string
  /** Narrows the size accepted while it streams (a container's maxFileBytes). */
  limit(maxBytes: number): void
}

/** Applies a container's ceiling to a file part while it streams. */
function limitTo(container: Container | undefined, file: Incoming): void {
  if (container?.maxFileBytes != null) file.limit(container.maxFileBytes)
}

/** Uploads that stream through Plinth: the proxy upload, replace, and client-made variants. */
export function createIngest(ctx: FilesContext, commit: UploadCommit) {
  const { access, variants } = ctx
  const { forget, commitUpload, commitReplace } = commit

  /**
   * Streams the `file` part to the storage and key `target` chooses (once the fields before the file are
   * known); on any failure nothing stays stored.
   */
  async function receive(
    body: UploadBody,
    maxBytes: number,
    target: (
      file: Incoming,
      fields: Readonly<Record<string, string>>,
    ) => Promise<{ storage: ObjectStorage; key: string }>,
  ): Promise<{ result: MultipartResult; key: string | null; storage: ObjectStorage | null; mimeType: string }> {
    refuseLargeBody(body, maxBytes)
    let stored: { storage: ObjectStorage; key: string } | null = null
    let mimeType = ''
    try {
      const result = await readMultipart(body.source, body.contentType, {
        fileField: 'file',
        maxFileBytes: maxBytes,
        maxFields: maxFormFields,
        onFile: async (file, fields) => {
          checkFilename(file.filename, 'file')
          mimeType = checkMimeType(file.contentType.split(';')[0]!, 'file')
          const chosen = await target({ filename: file.filename, mimeType, limit: file.limit }, fields)
          stored = chosen
          await chosen.storage.put(chosen.key, file.stream, { contentType: mimeType })
        },
      })
      if (!result.file)
        throw new AppError('invalid_request', 'Send the file as the multipart field "file"', { field: 'file' })
      const done = stored as { storage: ObjectStorage; key: string } | null
      return { result, key: done?.key ?? null, storage: done?.storage ?? null, mimeType }
    } catch (err) {
      const done = stored as { storage: ObjectStorage; key: string } | null
      if (done) await forget(done.storage, done.key)
      throw err
    }
  }

  return {
    /**
     * The proxy upload: a multipart body (`file`, optional `visibility` and `collection_name`) stored,
     * measured and confirmed in one request (about 95 MB at most). Throws unauthorized, invalid_request,
     * unsupported_media_type, limit_exceeded (size or quota).
     */
    async upload(principal: Principal, body: UploadBody): Promise<FileWire> {
      const owner = ownerOf(principal)
      if (owner === null) throw new AppError('unauthorized', 'Sign in to upload files')
      const projectId = principal.projectId
      const id = newId()
      let container: Container | undefined
      let place: Placement | undefined
      const { result, key, storage, mimeType } = await receive(body, limits.maxProxyBytes, async (file, fields) => {
        container = await containerOf(ctx, projectId, fields.container_id, file.mimeType)
        place = await ctx.placement.placeFor(projectId, container)
        // Before a byte is stored: the quota counts the instance's storage only (decision 067).
        if (place.storageConnectionId === null) await ctx.assertQuota(projectId, 1)
        limitTo(container, file)
        return { storage: place.storage, key: originalKey(projectId, id, file.filename, undefined, container?.prefix) }
      })
      const file = result.file!
      try {
        refuseFields(result, ['visibility', 'collection_name', 'container_id'])
        if (result.fields.container_id !== undefined && container?.id !== result.fields.container_id)
          throw new AppError('invalid_request', 'Send container_id before the file part', { field: 'container_id' })
        const visibility = result.fields.visibility ?? container?.visibility ?? 'public'
        if (visibility !== 'public' && visibility !== 'private')
          throw new AppError('invalid_request', 'visibility must be public or private', { field: 'visibility' })
        if (file.sizeBytes === 0) throw new AppError('invalid_request', 'The file is empty', { field: 'file' })
        const collection = await ctx.checkCollection(principal, result.fields.collection_name)
        return await commitUpload(
          principal,
          owner,
          {
            id,
            key: key!,
            place: place!,
            filename: file.filename,
            mimeType,
            sizeBytes: file.sizeBytes,
            sha256: file.sha256,
            visibility,
            collection,
            ...(container ? { containerId: container.id } : {}),
          },
          'proxy',
        )
      } catch (err) {
        await forget(storage!, key)
        throw err
      }
    },

    /**
     * Replaces a file's bytes, keeping its id, filename and place (its storage, container prefix): the new
     * bytes are stored under a new key first, the old variants removed, then the row switched over and the
     * old object removed. A file uploaded into a container meets its current types and size. Throws
     * not_found, forbidden (outside the update grant's item_filter), invalid_request (never completed,
     * empty, a type its container refuses), limit_exceeded, service_unavailable (old variants could not be
     * removed; nothing changed), conflict.
     */
    async replace(principal: Principal, id: string, body: UploadBody): Promise<FileWire> {
      const row = await access.visible(principal, id)
      if (row.status !== 'complete')
        throw new AppError('invalid_request', 'This upload was never completed; confirm it before replacing it')
      await access.assertInScope(principal, row, 'update')
      const place = await ctx.placement.storageOf(row)
      const container = await containerOfFile(ctx, row)
      const { result, key, mimeType } = await receive(body, limits.maxProxyBytes, async (file) => {
        if (container) checkContainerType(container, file.mimeType)
        limitTo(container, file)
        return {
          storage: place,
          key: originalKey(row.project_id, row.id, row.filename, newId().slice(0, 12), prefixOf(row)),
        }
      })
      const file = result.file!
      try {
        refuseFields(result, [])
        if (file.sizeBytes === 0) throw new AppError('invalid_request', 'The replacement is empty', { field: 'file' })
      } catch (err) {
        await forget(place, key)
        throw err
      }
      return commitReplace(row, place, { key: key!, mimeType, sizeBytes: file.sizeBytes, sha256: file.sha256 })
    },

    /**
     * Attaches a client-made preview (multipart: `file`, an image of at most 10 MB, and `name`) as a named
     * variant, replacing one of that name. Uploader only. Throws not_found, forbidden, invalid_request, conflict.
     */
    async attachVariant(principal: Principal, id: string, body: UploadBody): Promise<FileWire> {
      const row = await access.visible(principal, id)
      access.assertOwner(principal, row, 'attach variants')
      if (row.status !== 'complete' || !row.sha256)
        throw new AppError('invalid_request', 'This upload was never completed; confirm it first')
      refuseLargeBody(body, limits.maxClientVariantBytes)
      let data: Buffer | null = null
      let mimeType = ''
      const result = await readMultipart(body.source, body.contentType, {
        fileField: 'file',
        maxFileBytes: limits.maxClientVariantBytes,
        maxFields: maxFormFields,
        onFile: async (file) => {
          mimeType = checkMimeType(file.contentType.split(';')[0]!, 'file')
          if (!mimeType.startsWith('image/'))
            throw new AppError('invalid_request', 'A variant must be an image (image/*)', { field: 'file' })
          data = await collect(file.stream)
        },
      })
      refuseFields(result, ['name'])
      const name = result.fields.name ?? ''
      if (!variantName.test(name) || name === 'original') {
        throw new AppError('invalid_request', 'name must be 1-32 lower-case letters, digits, - or _ (not "original")', {
          field: 'name',
        })
      }
      if (!data || (data as Buffer).length === 0)
        throw new AppError('invalid_request', 'Send the preview image as the multipart field "file"', { field: 'file' })
      const bytes: Buffer = data
      const sharp = await loadSharp()
      const meta = await sharp(bytes)
        .metadata()
        .catch(() => null)
      if (!meta || !meta.width || !meta.height)
        throw new AppError('invalid_request', 'The variant is not an image that can be read', { field: 'file' })
      const storage = await ctx.placement.storageOf(row)
      const key = clientVariantKey(row, row.sha256, name, newId().slice(0, 12), mimeType)
      await storage.put(key, bytes, { contentType: mimeType, sizeBytes: bytes.length })
      let replaced: string | null = null
      const after = await variants.update(row, (state) => {
        replaced = state.items[name]?.key ?? null
        return {
          ...state,
          items: {
            ...state.items,
            [name]: {
              key,
              width: meta.width!,
              height: meta.height!,
              sizeBytes: bytes.length,
              mimeType,
              source: 'client',
            },
          },
        }
      })
      if (!after) {
        await forget(storage, key)
        throw new AppError('conflict', 'The file was replaced or deleted meanwhile; try again')
      }
      if (replaced !== null && replaced !== key) await forget(storage, replaced)
      return toWire(after)
    },
  }
}
