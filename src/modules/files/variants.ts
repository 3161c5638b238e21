import type { Readable } from 'node:stream'
import type Sharp from 'sharp'
import type { Logger } from '../../lib/log.js'
import type { ObjectStorage } from '../../lib/storage/index.js'
import type { SettingsService } from '../settings/index.js'
import {
  isResizable,
  limits,
  parseVariants,
  variantKey,
  type FileRow,
  type StoredVariant,
  type VariantState,
  type VariantStatus,
} from './model.js'
import type { FilesStore } from './store.js'

/** One size the server makes: the longest side at most `size` pixels. */
export interface VariantSpec {
  name: string
  size: number
}

/** The fixed thumbnail; the other sizes come from the project's `files.variants` setting. */
export const THUMBNAIL: VariantSpec = { name: 'thumbnail', size: 200 }

/** `small:480,medium:1024` (the `files.variants` setting, checked when saved) → the sizes it names. */
export function parseSizes(value: string): VariantSpec[] {
  if (value === '') return []
  return value.split(',').map((pair) => {
    const [name, size] = pair.split(':')
    return { name: name!, size: Number(size) }
  })
}

export interface VariantsDeps {
  store: FilesStore
  /** Where a file's bytes live (its variants beside its original). */
  storageOf: (row: FileRow) => Promise<ObjectStorage>
  settings: SettingsService
  log: Logger
  /** A container's sizes, which replace the project's files.variants for the files uploaded into it (decision 066). */
  containerSizes?: (projectId: string, containerId: string) => Promise<VariantSpec[] | undefined>
}

/** Reads a stream whole, refusing more than `max` bytes (sharp decodes the whole image anyway). */
async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > max) {
      stream.destroy()
      throw new Error(`the original is larger than ${max} bytes`)
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

const maxPixels = 100_000_000

/** sharp (libvips, ~20 MB resident) loads on the first image, not at start-up. */
export async function loadSharp(): Promise<typeof Sharp> {
  return (await import('sharp')).default
}

/** One resized copy, in the original's format, turned upright by its EXIF orientation. */
async function render(
  input: Buffer,
  mimeType: string,
  size: number,
): Promise<{ data: Buffer; width: number; height: number }> {
  // At most 100 megapixels: a small file may still decode to gigabytes (a decompression bomb).
  const sharp = await loadSharp()
  const resized = sharp(input, { limitInputPixels: maxPixels })
    .rotate()
    .resize({ width: size, height: size, fit: 'inside', withoutEnlargement: true })
  const encoded = mimeType.startsWith('image/png') ? resized.png() : resized.jpeg({ quality: 80 })
  const { data, info } = await encoded.toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

/**
 * Server-made image variants (JPEG and PNG): made from the original, stored under keys named by the
 * content they were made from, then committed to the row only if the original is still the same one; a
 * run that lost that race removes what it made. Background runs go through one in-process queue.
 */
export function createVariants(deps: VariantsDeps) {
  const { store, log } = deps

  async function specs(row: FileRow): Promise<VariantSpec[]> {
    const own = row.container_id ? await deps.containerSizes?.(row.project_id, row.container_id) : undefined
    return [THUMBNAIL, ...(own ?? parseSizes(await deps.settings.get(row.project_id, 'files.variants')))]
  }

  /** Best-effort removal of objects no row refers to any more, in `storage`; a failure is logged (an orphan, not an error). */
  async function discard(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      try {
        await storage.delete(key)
      } catch (err) {
        log.warn({ err, key }, 'could not remove a file variant object')
      }
    }
  }

  /** Rewrites the row's variant state from its current value (optimistic, retried); undefined when the original changed or the row is gone. */
  async function update(row: FileRow, change: (state: VariantState) => VariantState): Promise<FileRow | undefined> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const fresh = await store.byId(row.project_id, row.id)
      if (!fresh || fresh.r2_key !== row.r2_key) return undefined
      const next = JSON.stringify(change(parseVariants(fresh.variants)))
      const swapped = await store.swapVariants(row.project_id, row.id, row.r2_key, fresh.variants, next)
      if (swapped) return swapped
    }
    throw new Error('the file variants kept changing')
  }

  async function setStatus(row: FileRow, status: VariantStatus): Promise<void> {
    await update(row, (state) => ({ ...state, status }))
  }

  /**
   * Makes the variants named in `only` (all sizes when absent) of a complete JPEG or PNG and commits them.
   * Returns the row after, or null when the original changed meanwhile (nothing of this run is kept).
   * On failure the row's variant status becomes `failed` and the error is thrown.
   */
  async function generate(row: FileRow, only?: readonly string[]): Promise<FileRow | null> {
    const all = await specs(row)
    const wanted = only ? all.filter((s) => only.includes(s.name)) : all
    const made: Record<string, StoredVariant> = {}
    let storage: ObjectStorage | undefined
    try {
      if (!row.sha256 || !isResizable(row.mime_type))
        throw new Error('only complete JPEG and PNG files have server-made variants')
      storage = await deps.storageOf(row)
      const source = await storage.get(row.r2_key)
      if (!source) throw new Error('the original is missing from storage')
      const input = await readAll(source, limits.maxFileBytes)
      for (const spec of wanted) {
        const out = await render(input, row.mime_type, spec.size)
        const key = variantKey(row, row.sha256, spec.name, row.mime_type)
        await storage.put(key, out.data, { contentType: row.mime_type, sizeBytes: out.data.length })
        made[spec.name] = {
          key,
          width: out.width,
          height: out.height,
          sizeBytes: out.data.length,
          mimeType: row.mime_type,
          source: 'server',
        }
      }
    } catch (err) {
      if (storage)
        await discard(
          storage,
          Object.values(made).map((v) => v.key),
        )
      await setStatus(row, 'failed').catch((e: unknown) =>
        log.warn({ err: e, fileId: row.id }, 'could not record a variant failure'),
      )
      throw err
    }
    const stale: string[] = []
    const names = new Set(all.map((s) => s.name))
    const after = await update(row, (state) => {
      const items = { ...state.items }
      stale.length = 0
      for (const [name, variant] of Object.entries(made)) {
        const old = items[name]
        if (old && old.key !== variant.key) stale.push(old.key)
        items[name] = variant
      }
      // A full run drops the server sizes no longer configured.
      if (!only) {
        for (const [name, variant] of Object.entries(items)) {
          if (variant.source === 'server' && !names.has(name)) {
            stale.push(variant.key)
            delete items[name]
          }
        }
      }
      return { status: 'ready', items }
    })
    if (!after) {
      const current = await store.byId(row.project_id, row.id)
      const kept = new Set(Object.values(current ? parseVariants(current.variants).items : {}).map((v) => v.key))
      await discard(
        storage,
        Object.values(made)
          .map((v) => v.key)
          .filter((k) => !kept.has(k)),
      )
      return null
    }
    await discard(storage, stale)
    return after
  }

  const queue = createQueue(async (projectId, id) => {
    const row = await store.byId(projectId, id)
    if (!row || row.status !== 'complete' || !isResizable(row.mime_type)) return
    await generate(row)
  }, log)

  return {
    specs,
    generate,
    update,
    discard,
    /** Generates every size of a file in the background (store_on_upload). */
    schedule: queue.schedule,
    /** Resolves once the background queue is empty (tests, shutdown). */
    idle: queue.idle,
    close: queue.close,
  }
}

export type Variants = ReturnType<typeof createVariants>

/** One background worker: files wait in order, each at most once; a file scheduled while it runs runs again after. */
function createQueue(run: (projectId: string, id: string) => Promise<void>, log: Logger) {
  const waiting = new Map<string, { projectId: string; id: string }>()
  let running: Promise<void> | null = null
  let closed = false

  async function drain(): Promise<void> {
    for (let next = waiting.entries().next(); !next.done && !closed; next = waiting.entries().next()) {
      const [key, job] = next.value
      waiting.delete(key)
      try {
        await run(job.projectId, job.id)
      } catch (err) {
        log.warn({ err, fileId: job.id }, 'file variant generation failed')
      }
    }
    running = null
  }

  return {
    schedule(projectId: string, id: string): void {
      if (closed) return
      waiting.set(`${projectId}/${id}`, { projectId, id })
      running ??= drain()
    },
    async idle(): Promise<void> {
      while (running) await running
    },
    async close(): Promise<void> {
      closed = true
      waiting.clear()
      await running
    },
  }
}
