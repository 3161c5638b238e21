import { NetworkError } from './errors.js'
import { errorOfAnswer, putWithProgress, sizeOf, type UploadProgress, type UploadSource } from './files-put.js'
import { sleep } from './flows-wait.js'
import type { components } from './generated/openapi.js'
import type { Transport } from './transport.js'

export type { UploadProgress, UploadSource } from './files-put.js'

/** The File object (docs/files.md#the-file-object); times in Unix seconds. Generated from the API's schema. */
export type PlinthFile = components['schemas']['File']

/** A stored image size (server-made, or attached by a client). */
export type FileVariant = PlinthFile['variants'][string]

export interface UploadOptions {
  /** Required unless the source is a File (its name is used). */
  filename?: string
  /** Default: the Blob's type, else application/octet-stream. */
  contentType?: string
  visibility?: 'public' | 'private'
  /** Attach the file to a collection (default: none, `__system`). */
  collection?: string
  /** Upload into a file container (its types, size and prefix apply). */
  containerId?: string
  /** Called as bytes go out; the last call has `loaded === total`. */
  onProgress?: (progress: UploadProgress) => void
  signal?: AbortSignal
}

export interface DownloadLink {
  url: string
  /** The variant the URL serves; null for the original (a size the file does not have falls back to it). */
  variant: string | null
  /** When the URL stops working (it is valid 300 s from its issue). */
  expiresAt: Date
}

export interface RegenerateResult {
  id: string
  filename: string
  status: 'regenerated' | 'skipped' | 'failed'
  reason: string | null
  file: PlinthFile
}

export interface Files {
  /**
   * One call through the presigned flow: upload-token, PUT the bytes to the URL, confirm-upload; answers
   * the complete file. Throws ValidationError (limit_exceeded: over 100 MB or the quota), ForbiddenError …
   */
  upload(source: UploadSource, options?: UploadOptions): Promise<PlinthFile>
  get(id: string): Promise<PlinthFile>
  list(query?: { page?: number; limit?: number; collection?: string }): Promise<{
    data: PlinthFile[]
    total: number
    page: number
    limit: number
    hasMore: boolean
  }>
  delete(id: string): Promise<void>
  /** A presigned URL for the original or a named variant (`thumbnail`, `small`, …), valid 300 s. */
  downloadUrl(id: string, options?: { variant?: string }): Promise<DownloadLink>
  /** The bytes of the original or a variant (a fresh download URL, fetched without the credential). */
  download(id: string, options?: { variant?: string; signal?: AbortSignal }): Promise<Response>
  /**
   * Waits until the server has made the file's variants (`variantStatus` no longer `pending`), reading its
   * metadata every `intervalMs` (default 1000); answers the file with `variants`.
   */
  waitForVariants(id: string, options?: { intervalMs?: number; signal?: AbortSignal }): Promise<PlinthFile>
  /** Makes every server size again now (POST /:id/regenerate). */
  regenerate(id: string): Promise<RegenerateResult>
  /** Attaches a client-made preview as a named variant (POST /:id/variant; an image of at most 10 MB). */
  attachVariant(id: string, name: string, image: Blob): Promise<PlinthFile>
}

const base = '/api/v1/files'
const enc = encodeURIComponent

/** The files part of the client, over one Transport. */
export function createFiles(transport: Transport): Files {
  const get = async (id: string) => (await transport.request<{ data: PlinthFile }>('GET', `${base}/${enc(id)}`)).data

  const downloadUrl = async (id: string, options: { variant?: string } = {}): Promise<DownloadLink> => {
    const issued = Date.now()
    const reply = await transport.request<{ downloadUrl: string; variant: string | null }>(
      'GET',
      `${base}/download-token/${enc(id)}`,
      { query: { size: options.variant } },
    )
    return { url: reply.downloadUrl, variant: reply.variant, expiresAt: new Date(issued + 300_000) }
  }

  return {
    async upload(source, options = {}) {
      const named = (source as { name?: unknown }).name
      const filename = options.filename ?? (typeof named === 'string' ? named : undefined)
      if (!filename) throw new TypeError('upload: give options.filename (the source has no name)')
      const blobType = typeof Blob !== 'undefined' && source instanceof Blob ? source.type : ''
      const contentType = options.contentType ?? (blobType || 'application/octet-stream')
      const total = sizeOf(source)
      const token = await transport.request<{ id: string; uploadUrl: string }>('POST', `${base}/upload-token`, {
        body: {
          filename,
          mime_type: contentType,
          size_bytes: total,
          visibility: options.visibility,
          collection_name: options.collection,
          container_id: options.containerId,
        },
        signal: options.signal,
      })
      await putWithProgress(token.uploadUrl, source, {
        contentType,
        onProgress: options.onProgress,
        signal: options.signal,
        fetch: transport.fetch,
      })
      await transport.request('POST', `${base}/confirm-upload/${enc(token.id)}`, { signal: options.signal })
      return get(token.id)
    },

    get,

    async list(query = {}) {
      return transport.request('GET', base, {
        query: { page: query.page, limit: query.limit, collection_name: query.collection },
      })
    },

    async delete(id) {
      await transport.request('DELETE', `${base}/${enc(id)}`)
    },

    downloadUrl,

    async download(id, options = {}) {
      const link = await downloadUrl(id, options)
      let res: Response
      try {
        res = await transport.fetch(link.url, options.signal ? { signal: options.signal } : {})
      } catch (err) {
        throw new NetworkError(null, 'unreachable', `GET download URL: ${err instanceof Error ? err.message : err}`)
      }
      if (!res.ok) throw errorOfAnswer(res.status, await res.text())
      return res
    },

    async waitForVariants(id, options = {}) {
      for (;;) {
        const file = await get(id)
        if (file.variantStatus !== 'pending') return file
        await sleep(options.intervalMs ?? 1000, options.signal)
      }
    },

    async regenerate(id) {
      return (await transport.request<{ data: RegenerateResult }>('POST', `${base}/${enc(id)}/regenerate`)).data
    },

    async attachVariant(id, name, image) {
      const form = new FormData()
      form.set('name', name)
      form.set('file', image, (image as { name?: string }).name ?? `${name}`)
      return (await transport.request<{ data: PlinthFile }>('POST', `${base}/${enc(id)}/variant`, { body: form })).data
    },
  }
}
