import { AppError, isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import { createBytesIngest, type BytesUpload } from './bytes-ingest.js'
import { createFilesContext, type FilesDeps } from './context.js'
import { createContent, parseFileRef } from './content.js'
import { createIngest } from './ingest.js'
import { isResizable, limits, parseVariants, toWire, type FileRow, type FileWire } from './model.js'
import { createRegenerate } from './regenerate.js'
import { createCleanup } from './cleanup.js'
import { FILES_RESOURCE } from './access.js'
import { createTokenUploads, type UploadTokenInput } from './token-uploads.js'
import { createUploadCommit } from './upload-commit.js'

export interface FileList {
  data: FileWire[]
  total: number
  page: number
  limit: number
  hasMore: boolean
}

/** Files (core-api § File endpoints): metadata rows in the system database, bytes in object storage. */
export function createFilesService(deps: FilesDeps) {
  const ctx = createFilesContext(deps)
  const { store, access, variants } = ctx
  const commit = createUploadCommit(ctx)
  const ingest = createIngest(ctx, commit)
  const bytesIngest = createBytesIngest(ctx, commit)
  const tokenUploads = createTokenUploads(ctx)
  const regenerate = createRegenerate(ctx)
  const cleanup = createCleanup(ctx)
  const content = createContent(ctx)
  /**
   * A flow's replacement of `row` (replaceBytes' rules). A replaced file keeps its visibility and
   * collection; asking for a private file over a public one is refused, so content meant private is never
   * published by landing on a public file.
   */
  async function replaceFor(
    principal: Principal,
    row: FileRow,
    input: Omit<BytesUpload, 'filename' | 'flowKey'>,
  ): Promise<FileWire> {
    await access.assertInScope(principal, row, 'update')
    // A replaced file stays in its own container and place: naming another one is refused, not ignored.
    if (input.containerId !== undefined && input.containerId !== (row.container_id ?? null)) {
      throw new AppError(
        'invalid_request',
        'containerId: this key holds a file of another container (or of none); a replaced file stays where it is',
        { field: 'containerId', fileId: row.id },
      )
    }
    if (input.visibility === 'private' && row.visibility === 'public') {
      throw new AppError(
        'invalid_request',
        'This key holds a public file, and a private write there would publish its content: write to another key',
        {
          field: 'metadata.visibility',
          fileId: row.id,
        },
      )
    }
    return bytesIngest.replaceBytes(principal, row.id, { bytes: input.bytes, mimeType: input.mimeType })
  }
  /** The service boundary: the permission each route declares, checked first (unauthorized, forbidden). */
  const may = (principal: Principal, action: 'read' | 'create' | 'update' | 'delete') =>
    deps.access.authorize(principal, `${FILES_RESOURCE}:${action}`)

  return {
    /** Reserves a file and answers a presigned PUT URL (system/files:create); see token-uploads.ts. */
    async uploadToken(
      principal: Principal,
      input: UploadTokenInput,
    ): Promise<{ id: string; uploadUrl: string; r2Key: string }> {
      await may(principal, 'create')
      return tokenUploads.uploadToken(principal, input)
    },

    /** Confirms an upload whose bytes were PUT to its URL (system/files:create); see token-uploads.ts. */
    async confirm(principal: Principal, id: string): Promise<{ success: true; message: string }> {
      await may(principal, 'create')
      return tokenUploads.confirm(principal, id)
    },

    /** One file's metadata. Throws not_found. */
    async get(principal: Principal, id: string): Promise<FileWire> {
      await may(principal, 'read')
      return toWire(await access.visible(principal, id))
    },

    /** Complete files the caller may see, newest first. */
    async list(
      principal: Principal,
      query: { page: number; limit: number; collection_name?: string },
    ): Promise<FileList> {
      await may(principal, 'read')
      const sight = await access.sightOf(principal)
      const offset = (query.page - 1) * query.limit
      const { rows, total } = await store.listComplete(principal.projectId, sight, {
        limit: query.limit,
        offset,
        collection: query.collection_name,
      })
      return {
        data: rows.map(toWire),
        total,
        page: query.page,
        limit: query.limit,
        hasMore: offset + rows.length < total,
      }
    },

    /**
     * A presigned GET URL (300 s) for the original, or for the named variant when there is one (under
     * store_on_request the first request makes it). Any other size falls back to the original.
     * Throws not_found (missing, hidden, or not confirmed).
     */
    async downloadToken(
      principal: Principal,
      id: string,
      size?: string,
    ): Promise<{ id: string; downloadUrl: string; variant: string | null }> {
      await may(principal, 'read')
      let row = await access.visible(principal, id)
      if (row.status !== 'complete') throw new AppError('not_found', 'File not found')
      const wanted = size === undefined || size === '' || size === 'original' ? null : size
      let variant = wanted === null ? undefined : parseVariants(row.variants).items[wanted]
      if (
        wanted !== null &&
        !variant &&
        isResizable(row.mime_type) &&
        (await deps.settings.get(row.project_id, 'files.strategy')) === 'store_on_request'
      ) {
        if ((await variants.specs(row)).some((s) => s.name === wanted)) {
          try {
            row = (await variants.generate(row, [wanted])) ?? row
            variant = parseVariants(row.variants).items[wanted]
          } catch (err) {
            deps.log.warn(
              { err, fileId: row.id, size: wanted },
              'could not make a variant on request; answering the original',
            )
          }
        }
      }
      const target = variant
        ? { key: variant.key, contentType: variant.mimeType }
        : { key: row.r2_key, contentType: row.mime_type }
      // Signed here, served by the store that holds the bytes (a connection's bucket: its own endpoint).
      const storage = await ctx.placement.storageOf(row)
      const downloadUrl = await storage.presignGet(target.key, {
        expiresIn: limits.downloadUrlSeconds,
        filename: row.filename,
        contentType: target.contentType,
      })
      return { id: row.id, downloadUrl, variant: variant ? wanted : null }
    },

    /**
     * Deletes a file, its bytes and its variants. Throws not_found, forbidden (outside the delete grant's
     * item_filter), service_unavailable (storage refused; nothing is deleted from the API's view).
     */
    async delete(principal: Principal, id: string): Promise<{ success: true; message: string }> {
      await may(principal, 'delete')
      const row = await access.visible(principal, id)
      await access.assertInScope(principal, row, 'delete')
      await ctx.removeObjects(row)
      await store.remove(row.project_id, row.id)
      return { success: true, message: 'File deleted' }
    },

    /** Uploads a file through the server (system/files:create); see ingest.ts. */
    async upload(principal: Principal, body: Parameters<typeof ingest.upload>[1]): Promise<FileWire> {
      await may(principal, 'create')
      return ingest.upload(principal, body)
    },

    /** Replaces a file's bytes (system/files:update); see ingest.ts. */
    async replace(principal: Principal, id: string, body: Parameters<typeof ingest.replace>[2]): Promise<FileWire> {
      await may(principal, 'update')
      return ingest.replace(principal, id, body)
    },

    /** Attaches a variant the client made (system/files:create); see ingest.ts. */
    async attachVariant(
      principal: Principal,
      id: string,
      body: Parameters<typeof ingest.attachVariant>[2],
    ): Promise<FileWire> {
      await may(principal, 'create')
      return ingest.attachVariant(principal, id, body)
    },

    /** Makes one file's variants again (system/files:update); see regenerate.ts. */
    async regenerateOne(principal: Principal, id: string): ReturnType<typeof regenerate.regenerateOne> {
      await may(principal, 'update')
      return regenerate.regenerateOne(principal, id)
    },

    /** Makes variants again for a page of files (system/files:update); see regenerate.ts. */
    async regenerate(
      principal: Principal,
      input: Parameters<typeof regenerate.regenerate>[1],
    ): ReturnType<typeof regenerate.regenerate> {
      await may(principal, 'update')
      return regenerate.regenerate(principal, input)
    },

    /**
     * A complete file's metadata and bytes for a flow (file_read, file_transform), named by its id or its
     * r2Key (decision 040), at most `maxBytes`. Throws not_found (missing, hidden, pending), limit_exceeded.
     */
    async readContent(principal: Principal, key: string, maxBytes: number): Promise<{ file: FileWire; bytes: Buffer }> {
      await may(principal, 'read')
      return content.read(principal, key, maxBytes)
    },

    /**
     * Stores bytes for a flow (file_upload, file_transform, render_lens_template), R2-like: `key` names the
     * file written (decision 040).
     * - A file's id or r2Key: that file is replaced (system/files:update within its item_filter, as POST
     *   /:id/replace; not_found when hidden, forbidden outside the grant).
     * - A flow key (`reports/daily.csv`) held by a file: that file is replaced with the same rules, except
     *   that a file the caller cannot see is forbidden too (the key is taken, and not the caller's).
     * - A flow key held by no file: a new file holding that key, named after its last segment
     *   (system/files:create, as the proxy upload). Two first writes racing at one key make one file: the
     *   unique index refuses the second row, which then replaces the first file (or, if that is gone
     *   meanwhile, fails with conflict).
     * `visibility` and `collectionName` are a new file's; a replaced file keeps its own, and a private write
     * over a public file is refused (invalid_request) rather than published. Throws unauthorized, forbidden,
     * not_found, invalid_request, limit_exceeded, conflict, service_unavailable; a refused write changes no
     * file, and nothing new stays stored.
     */
    async writeContent(
      principal: Principal,
      key: string,
      input: Omit<BytesUpload, 'filename' | 'flowKey'>,
    ): Promise<{ file: FileWire; replaced: boolean }> {
      const ref = parseFileRef(key)
      if (ref.kind === 'id') {
        await may(principal, 'update')
        const row = await content.rowOf(principal, key)
        return { file: await replaceFor(principal, row, input), replaced: true }
      }
      for (let attempt = 0; ; attempt++) {
        const held = await store.byFlowKey(principal.projectId, ref.flowKey)
        if (held) {
          await may(principal, 'update')
          if (!access.sees(await access.sightOf(principal), held)) {
            throw new AppError('forbidden', `key "${ref.flowKey.slice(0, 100)}" holds a file you may not replace`, {
              resource: FILES_RESOURCE,
              action: 'update',
              field: 'key',
            })
          }
          return { file: await replaceFor(principal, held, input), replaced: true }
        }
        await may(principal, 'create')
        try {
          const filename = ref.flowKey.slice(ref.flowKey.lastIndexOf('/') + 1)
          return {
            file: await bytesIngest.uploadBytes(principal, { ...input, filename, flowKey: ref.flowKey }),
            replaced: false,
          }
        } catch (err) {
          // Another write made the file at this key first: replace it (once), as if this write came second.
          if (!isAppError(err) || err.code !== 'already_exists') throw err
          if (attempt > 0)
            throw new AppError(
              'conflict',
              `The file at key "${ref.flowKey.slice(0, 100)}" changed meanwhile; try again`,
              { field: 'key' },
            )
        }
      }
    },

    /** Which of these ids name files the caller may read, as GET /:id would show them (the records module's check of file fields). */
    readable: access.readable,

    /** Settles the files of collections that are gone, as the acting principal (the collections module calls it). */
    removeOfCollections: cleanup.removeOfCollections,
    /** How many files of the project were uploaded into a container (unchecked: the containers module asks before a delete). */
    countInContainer: (projectId: string, containerId: string) => store.countInContainer(projectId, containerId),
    /** How many files of the project keep their bytes on a storage connection (unchecked: its delete asks). */
    countOnConnection: (projectId: string, connectionId: string) => store.countOnConnection(projectId, connectionId),

    /** Runs the cleanup sweep now (a timer runs it every 10 minutes): abandoned uploads, and the keys of dead upload URLs. */
    sweep: cleanup.sweep,

    async close(): Promise<void> {
      await cleanup.close()
      await variants.close()
    },
  }
}

export type FilesService = ReturnType<typeof createFilesService>
