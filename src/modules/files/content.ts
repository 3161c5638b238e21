import { AppError } from '../../lib/errors.js'
import { idPattern } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import type { FilesContext } from './context.js'
import { toWire, type FileRow, type FileWire } from './model.js'

/**
 * How flows name files (decision 040): a file's id, its current `r2Key` as the File object shows it
 * (`projects/<projectId>/files/<id>/…`), or a **flow key**, a relative path (`reports/daily.csv`) that a
 * flow wrote the file at (the `flow_key` column, unique per project). All three resolve to a row of the
 * files table and then pass the same visibility rules as GET /api/v1/files/:id; a key that names no file
 * (a variant, an upload URL's key, another project's key, an old revision) names nothing. Raw object keys
 * are never read or written.
 */
export type FileRef =
  | { readonly kind: 'id'; readonly id: string; readonly r2Key?: string }
  | { readonly kind: 'flow'; readonly flowKey: string }

// A container's prefix may stand before the id (decision 066); a prefix never holds a 32-hex segment.
const r2KeyPattern = /^projects\/([^/]+)\/files\/(?:[a-z0-9][a-z0-9_.-]*\/)*?([0-9a-f]{32})\/.+$/
/** One segment of a flow key: letters, digits, `.`, `-`, `_`. */
const segment = /^[A-Za-z0-9._-]{1,120}$/

/** Whether `key` is a flow key: 1-20 segments of 1-120 letters, digits, `.`, `-`, `_`, none, `.` or `..`; at most 500 characters. */
export function isFlowKey(key: string): boolean {
  const parts = key.split('/')
  return (
    key.length > 0 &&
    key.length <= 500 &&
    parts.length <= 20 &&
    parts.every((p) => segment.test(p) && p !== '.' && p !== '..')
  )
}

/**
 * What `key` names: a file's id, a file's r2Key (with its id), or a flow key. A 32-hex key is always an id,
 * and a key shaped as a file's r2Key always that file's r2Key. Throws invalid_request for anything else.
 */
export function parseFileRef(key: string): FileRef {
  const trimmed = key.trim()
  if (idPattern.test(trimmed)) return { kind: 'id', id: trimmed }
  const match = r2KeyPattern.exec(trimmed)
  if (match) return { kind: 'id', id: match[2]!, r2Key: trimmed }
  if (isFlowKey(key)) return { kind: 'flow', flowKey: key }
  throw new AppError(
    'invalid_request',
    'key: a file id, a file\'s r2Key, or a relative path of 1-20 segments of letters, digits, ".", "-" and "_" (no "." or ".." segment, no leading, trailing or doubled "/"), at most 500 characters',
    { field: 'key' },
  )
}

/** True when `key` names a file by its id or r2Key rather than by a flow key. Throws invalid_request as parseFileRef. */
export function isFileHandle(key: string): boolean {
  return parseFileRef(key).kind === 'id'
}

function notFound(): AppError {
  return new AppError('not_found', 'File not found')
}

/** Reading a file's bytes for flows (file_read, file_transform's source). */
export function createContent(ctx: FilesContext) {
  const { access, store } = ctx

  /** The row a key names, as the caller may see it (GET /:id's rules). Throws not_found, invalid_request (not a key). */
  async function rowOf(principal: Principal, key: string): Promise<FileRow> {
    const ref = parseFileRef(key)
    if (ref.kind === 'flow') {
      const row = await store.byFlowKey(principal.projectId, ref.flowKey)
      if (!row || !access.sees(await access.sightOf(principal), row)) throw notFound()
      return row
    }
    const row = await access.visible(principal, ref.id)
    // An r2Key must be the file's current one: an old revision, another project's prefix or a made-up tail names nothing.
    if (ref.r2Key !== undefined && ref.r2Key !== row.r2_key) throw notFound()
    return row
  }

  return {
    rowOf,

    /** The id of the file a handle names, as the caller may see it. Throws not_found. */
    async idOf(principal: Principal, key: string): Promise<string> {
      return (await rowOf(principal, key)).id
    },

    /**
     * A complete file's metadata and bytes, at most `maxBytes`. Throws not_found (missing, hidden, pending,
     * or its bytes gone), limit_exceeded (larger than `maxBytes`).
     */
    async read(principal: Principal, key: string, maxBytes: number): Promise<{ file: FileWire; bytes: Buffer }> {
      const row = await rowOf(principal, key)
      if (row.status !== 'complete') throw notFound()
      if (row.size_bytes > maxBytes)
        throw new AppError('limit_exceeded', `The file is ${row.size_bytes} bytes; a flow reads at most ${maxBytes}`, {
          limit: maxBytes,
          sizeBytes: Number(row.size_bytes),
        })
      const stream = await (await ctx.placement.storageOf(row)).get(row.r2_key)
      if (!stream) throw notFound()
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > maxBytes) {
          stream.destroy()
          throw new AppError('limit_exceeded', `The file is larger than ${maxBytes} bytes`, { limit: maxBytes })
        }
        chunks.push(chunk)
      }
      return { file: toWire(row), bytes: Buffer.concat(chunks) }
    },
  }
}
