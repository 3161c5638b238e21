import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { AppError, isAppError } from '../../lib/errors.js'
import { principalSnapshot } from '../../lib/events/index.js'
import { newId } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { FilesContext } from './context.js'
import type { FileUploadEvent } from './events.js'
import { clientVariantKey, emptyVariants, limits, originalKey, ownerOf, parseVariants, serverOwnedNames, toWire, type FileRow, type FileWire, type Visibility } from './model.js'
import { readMultipart, type MultipartResult } from './multipart.js'
import { checkFilename, checkMimeType } from './checks.js'
import { loadSharp } from './variants.js'

/** A request body as the route hands it over: unread, streaming. */
export interface UploadBody {
  source: AsyncIterable<Uint8Array>
  contentType: string | undefined
  contentLength: number | undefined
}

/** A new file from bytes in hand (flows): the filename, its type, and the fields the upload routes take. */
export interface BytesUpload {
  filename: string
  mimeType: string
  bytes: Buffer
  visibility?: Visibility
  collectionName?: string
  /** The flow key the new file is written at (unique per project: a file already there makes this throw already_exists). */
  flowKey?: string
}

interface NewFile {
  id: string
  key: string
  filename: string
  mimeType: string
  sizeBytes: number
  sha256: string
  visibility: Visibility
  collection: string
  flowKey?: string
}

const variantName = /^[a-z][a-z0-9_-]{0,31}$/
// Room for a File sent back whole as form fields (its server-owned fields are ignored) beside the real ones.
const maxFormFields = 32
// Room for the multipart framing around the file (boundaries, part headers, small fields).
const framingAllowance = 64 * 1024

function refuseLargeBody(body: UploadBody, max: number): void {
  if (body.contentLength !== undefined && body.contentLength > max + framingAllowance) {
    throw new AppError('limit_exceeded', `The file is larger than ${max} bytes`, { limit: max }, { headers: { Connection: 'close' } })
  }
}

/** Refuses a form field other than `allowed` ones; server-owned fields (uploadedBy, status, …) are ignored, whatever their value. */
function refuseFields(result: MultipartResult, allowed: readonly string[]): void {
  const unknown = Object.keys(result.fields).filter((f) => !allowed.includes(f) && !serverOwnedNames.includes(f))
  if (unknown.length > 0) {
    const known = allowed.length > 0 ? `; known: file, ${allowed.join(', ')}` : '; send only "file"'
    throw new AppError('invalid_request', `Unknown form field "${unknown[0]!.slice(0, 60)}"${known}`, { field: unknown[0]!.slice(0, 60) })
  }
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Uploads that stream through Plinth: the proxy upload, replace, and client-made variants. */
export function createIngest(ctx: FilesContext) {
  const { deps, access, variants } = ctx
  const { storage, log } = deps

  async function forget(key: string | null): Promise<void> {
    if (key === null) return
    try {
      await storage.delete(key)
    } catch (err) {
      log.warn({ err, key }, 'could not remove an object of a failed upload')
    }
  }

  /** Streams the `file` part to `key` in storage; on any failure nothing stays stored. */
  async function receive(body: UploadBody, maxBytes: number, keyFor: (filename: string) => string): Promise<{ result: MultipartResult; key: string | null; mimeType: string }> {
    refuseLargeBody(body, maxBytes)
    let key: string | null = null
    let mimeType = ''
    try {
      const result = await readMultipart(body.source, body.contentType, {
        fileField: 'file',
        maxFileBytes: maxBytes,
        maxFields: maxFormFields,
        onFile: async (file) => {
          checkFilename(file.filename, 'file')
          mimeType = checkMimeType(file.contentType.split(';')[0]!, 'file')
          key = keyFor(file.filename)
          await storage.put(key, file.stream, { contentType: mimeType })
        },
      })
      if (!result.file) throw new AppError('invalid_request', 'Send the file as the multipart field "file"', { field: 'file' })
      return { result, key, mimeType }
    } catch (err) {
      await forget(key)
      throw err
    }
  }

  /** Removes the old variants before a replace; throws service_unavailable (the file unchanged) when storage refuses one. */
  async function dropVariants(row: FileRow): Promise<void> {
    const removed: string[] = []
    for (const [name, variant] of Object.entries(parseVariants(row.variants).items)) {
      try {
        await storage.delete(variant.key)
        removed.push(name)
      } catch (err) {
        log.warn({ err, fileId: row.id, variant: name }, 'could not remove an old file variant')
        // Those already gone leave the row, so it never points at a missing object.
        if (removed.length > 0) {
          await variants.update(row, (state) => ({ ...state, items: Object.fromEntries(Object.entries(state.items).filter(([n]) => !removed.includes(n))) })).catch(() => undefined)
        }
        throw new AppError('service_unavailable', 'The old variants of this file could not be removed; the file was not changed, try again', { fileId: row.id })
      }
    }
  }

  /** The row of a new complete file whose bytes are stored at `stored.key`, under the quota; publishes file.upload. */
  async function commitUpload(principal: Principal, owner: string, stored: NewFile, via: FileUploadEvent['via']): Promise<FileWire> {
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
    }
    await ctx.reserve(projectId, stored.sizeBytes, (inTransaction) => inTransaction.insert(row))
    const wire = toWire(row)
    deps.events.emit('file.upload', { projectId, file: wire, via, principal: principalSnapshot(principal), at: now })
    if (background) variants.schedule(projectId, stored.id)
    return wire
  }

  /**
   * Switches `row` over to the new bytes already stored at `stored.key`: quota checked, old variants removed,
   * row switched, old object removed. On failure the new bytes are removed and the file keeps its old ones.
   */
  async function commitReplace(row: FileRow, stored: { key: string; mimeType: string; sizeBytes: number; sha256: string }): Promise<FileWire> {
    let updated: FileRow | undefined
    try {
      // Checked once before the old variants go, so the common refusal leaves the file as it was, and
      // again with the switch under the project's quota lock, so racing replacements cannot both pass.
      await ctx.assertQuota(row.project_id, stored.sizeBytes, row.size_bytes)
      await dropVariants(row)
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
        updated = await ctx.reserve(row.project_id, stored.sizeBytes, (inTransaction) => inTransaction.replaceContent(row.project_id, row.id, row.r2_key, content), row.size_bytes)
      } catch (err) {
        // Lost the race for the last bytes: the old bytes stay, but their variants are gone, so the row
        // must stop listing them (regenerate makes them again).
        if (isAppError(err) && err.code === 'limit_exceeded') await variants.update(row, (state) => ({ ...state, status: 'none', items: {} })).catch(() => undefined)
        throw err
      }
      if (!updated) throw new AppError('conflict', 'The file changed or was deleted during the upload; try again')
      if (background) variants.schedule(row.project_id, row.id)
    } catch (err) {
      await forget(stored.key)
      throw err
    }
    await forget(row.r2_key)
    return toWire(updated)
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
      await ctx.assertQuota(projectId, 1)
      const id = newId()
      const { result, key, mimeType } = await receive(body, limits.maxProxyBytes, (filename) => originalKey(projectId, id, filename))
      const file = result.file!
      try {
        refuseFields(result, ['visibility', 'collection_name'])
        const visibility = result.fields.visibility ?? 'public'
        if (visibility !== 'public' && visibility !== 'private') throw new AppError('invalid_request', 'visibility must be public or private', { field: 'visibility' })
        if (file.sizeBytes === 0) throw new AppError('invalid_request', 'The file is empty', { field: 'file' })
        const collection = await ctx.checkCollection(principal, result.fields.collection_name)
        return await commitUpload(principal, owner, { id, key: key!, filename: file.filename, mimeType, sizeBytes: file.sizeBytes, sha256: file.sha256, visibility, collection }, 'proxy')
      } catch (err) {
        await forget(key)
        throw err
      }
    },

    /**
     * A new file from bytes in hand (flows' file_upload and file_transform), with the proxy upload's rules:
     * an uploader, the collection visible to the caller, the project quota; complete at once, file.upload
     * published with `via: "flow"`. With `flowKey`, the row holds that key; a file already holding it makes
     * this throw already_exists (the unique index), the caller's cue to replace it instead. Nothing stays
     * stored when it fails: the object is written at the new file's own key first and removed if the row
     * cannot be. Throws unauthorized, invalid_request, limit_exceeded, already_exists.
     */
    async uploadBytes(principal: Principal, input: BytesUpload): Promise<FileWire> {
      const owner = ownerOf(principal)
      if (owner === null) throw new AppError('unauthorized', 'Sign in to upload files')
      const filename = checkFilename(input.filename, 'key')
      const mimeType = checkMimeType(input.mimeType, 'contentType')
      if (input.bytes.length === 0) throw new AppError('invalid_request', 'The content is empty', { field: 'content' })
      if (input.bytes.length > limits.maxProxyBytes) throw new AppError('limit_exceeded', `A file stored by a flow may be at most ${limits.maxProxyBytes} bytes`, { limit: limits.maxProxyBytes })
      const projectId = principal.projectId
      const collection = await ctx.checkCollection(principal, input.collectionName)
      await ctx.assertQuota(projectId, input.bytes.length)
      const id = newId()
      const key = originalKey(projectId, id, filename)
      await storage.put(key, input.bytes, { contentType: mimeType, sizeBytes: input.bytes.length })
      try {
        const sha256 = createHash('sha256').update(input.bytes).digest('hex')
        return await commitUpload(principal, owner, { id, key, filename, mimeType, sizeBytes: input.bytes.length, sha256, visibility: input.visibility ?? 'public', collection, flowKey: input.flowKey }, 'flow')
      } catch (err) {
        await forget(key)
        throw err
      }
    },

    /**
     * Replaces a file's bytes with bytes in hand (flows), with replace's rules: seen by the caller, complete,
     * inside its update grant's item_filter, within the quota. Throws not_found, forbidden, invalid_request,
     * limit_exceeded, service_unavailable, conflict.
     */
    async replaceBytes(principal: Principal, id: string, input: { bytes: Buffer; mimeType: string }): Promise<FileWire> {
      const row = await access.visible(principal, id)
      if (row.status !== 'complete') throw new AppError('invalid_request', 'This upload was never completed; confirm it before replacing it')
      await access.assertInScope(principal, row, 'update')
      const mimeType = checkMimeType(input.mimeType, 'contentType')
      if (input.bytes.length === 0) throw new AppError('invalid_request', 'The replacement is empty', { field: 'content' })
      if (input.bytes.length > limits.maxProxyBytes) throw new AppError('limit_exceeded', `A file stored by a flow may be at most ${limits.maxProxyBytes} bytes`, { limit: limits.maxProxyBytes })
      await ctx.assertQuota(row.project_id, input.bytes.length, row.size_bytes)
      const key = originalKey(row.project_id, row.id, row.filename, newId().slice(0, 12))
      await storage.put(key, input.bytes, { contentType: mimeType, sizeBytes: input.bytes.length })
      const sha256 = createHash('sha256').update(input.bytes).digest('hex')
      return commitReplace(row, { key, mimeType, sizeBytes: input.bytes.length, sha256 })
    },

    /**
     * Replaces a file's bytes, keeping its id and filename: the new bytes are stored under a new key first,
     * the old variants removed, then the row switched over and the old object removed. Throws not_found,
     * forbidden (outside the update grant's item_filter), invalid_request (never completed, empty),
     * limit_exceeded, service_unavailable (old variants could not be removed; nothing changed), conflict.
     */
    async replace(principal: Principal, id: string, body: UploadBody): Promise<FileWire> {
      const row = await access.visible(principal, id)
      if (row.status !== 'complete') throw new AppError('invalid_request', 'This upload was never completed; confirm it before replacing it')
      await access.assertInScope(principal, row, 'update')
      const { result, key, mimeType } = await receive(body, limits.maxProxyBytes, () => originalKey(row.project_id, row.id, row.filename, newId().slice(0, 12)))
      const file = result.file!
      try {
        refuseFields(result, [])
        if (file.sizeBytes === 0) throw new AppError('invalid_request', 'The replacement is empty', { field: 'file' })
      } catch (err) {
        await forget(key)
        throw err
      }
      return commitReplace(row, { key: key!, mimeType, sizeBytes: file.sizeBytes, sha256: file.sha256 })
    },

    /**
     * Attaches a client-made preview (multipart: `file`, an image of at most 10 MB, and `name`) as a named
     * variant, replacing one of that name. Uploader only. Throws not_found, forbidden, invalid_request, conflict.
     */
    async attachVariant(principal: Principal, id: string, body: UploadBody): Promise<FileWire> {
      const row = await access.visible(principal, id)
      access.assertOwner(principal, row, 'attach variants')
      if (row.status !== 'complete' || !row.sha256) throw new AppError('invalid_request', 'This upload was never completed; confirm it first')
      refuseLargeBody(body, limits.maxClientVariantBytes)
      let data: Buffer | null = null
      let mimeType = ''
      const result = await readMultipart(body.source, body.contentType, {
        fileField: 'file',
        maxFileBytes: limits.maxClientVariantBytes,
        maxFields: maxFormFields,
        onFile: async (file) => {
          mimeType = checkMimeType(file.contentType.split(';')[0]!, 'file')
          if (!mimeType.startsWith('image/')) throw new AppError('invalid_request', 'A variant must be an image (image/*)', { field: 'file' })
          data = await collect(file.stream)
        },
      })
      refuseFields(result, ['name'])
      const name = result.fields.name ?? ''
      if (!variantName.test(name) || name === 'original') {
        throw new AppError('invalid_request', 'name must be 1-32 lower-case letters, digits, - or _ (not "original")', { field: 'name' })
      }
      if (!data || (data as Buffer).length === 0) throw new AppError('invalid_request', 'Send the preview image as the multipart field "file"', { field: 'file' })
      const bytes: Buffer = data
      const sharp = await loadSharp()
      const meta = await sharp(bytes).metadata().catch(() => null)
      if (!meta || !meta.width || !meta.height) throw new AppError('invalid_request', 'The variant is not an image that can be read', { field: 'file' })
      const key = clientVariantKey(row.project_id, row.id, row.sha256, name, newId().slice(0, 12), mimeType)
      await storage.put(key, bytes, { contentType: mimeType, sizeBytes: bytes.length })
      let replaced: string | null = null
      const after = await variants.update(row, (state) => {
        replaced = state.items[name]?.key ?? null
        return { ...state, items: { ...state.items, [name]: { key, width: meta.width!, height: meta.height!, sizeBytes: bytes.length, mimeType, source: 'client' } } }
      })
      if (!after) {
        await forget(key)
        throw new AppError('conflict', 'The file was replaced or deleted meanwhile; try again')
      }
      if (replaced !== null && replaced !== key) await forget(replaced)
      return toWire(after)
    },
  }
}
