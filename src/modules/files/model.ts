import type { Principal } from '../../lib/principal.js'

/** One row of `files` (system database), as stored. */
export interface FileRow {
  id: string
  project_id: string
  collection_name: string
  r2_key: string
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string | null
  uploaded_by: string | null
  owner: string
  visibility: Visibility
  status: FileStatus
  created_at: number
  updated_at: number
  /** JSON of {@link VariantState}. */
  variants: string
  /**
   * The key the upload URL writes to (token uploads), kept after confirm until the URL is certainly dead;
   * never served. Null for proxy uploads, once swept, and on rows reserved before uploads had a key of their own.
   */
  upload_key: string | null
  /** The relative path a flow wrote this file at (docs/files.md § Files in flows), unique in its project; null otherwise. */
  flow_key: string | null
  /** The container the file was uploaded into (decision 066); null (or absent on older rows' reads) otherwise. */
  container_id?: string | null
  /** The storage connection its bytes live on (decision 067); null for the instance's own storage. */
  storage_connection_id?: string | null
  /** With a storage connection: the bucket its bytes were stored in. */
  bucket_name?: string | null
}

export type Visibility = 'public' | 'private'
export type FileStatus = 'pending' | 'complete'
export type VariantStatus = 'none' | 'pending' | 'ready' | 'failed'

/** One stored variant of a file: a server-made size or a client-attached preview. */
export interface StoredVariant {
  key: string
  width: number | null
  height: number | null
  sizeBytes: number
  mimeType: string
  source: 'server' | 'client'
}

export interface VariantState {
  status: VariantStatus
  items: Record<string, StoredVariant>
}

/** The File object of core-api, plus sha256, status, updatedAt and the variants (Decision: docs/files.md). */
export interface FileWire {
  id: string
  projectId: string
  collectionName: string
  r2Key: string
  filename: string
  mimeType: string
  sizeBytes: number
  sha256: string | null
  uploadedBy: string | null
  visibility: Visibility
  /** `pending` until confirm-upload; lists show complete files only. */
  status: FileStatus
  createdAt: number
  updatedAt: number
  variantStatus: VariantStatus
  variants: Record<
    string,
    {
      r2Key: string
      width: number | null
      height: number | null
      sizeBytes: number
      mimeType: string
      source: 'server' | 'client'
    }
  >
  /** The flow key the file was written at by a flow (`reports/daily.csv`); null for other files. */
  flowKey: string | null
}

/**
 * The File object's properties only the server sets, on every route (docs/files.md § Server-owned fields).
 * A body that describes a file (upload-token, and the form fields of upload, replace and variant) may carry
 * them, in the File object's camelCase or the request bodies' snake_case, as when a client sends back a File
 * it read: they are accepted whatever their value, ignored, and the stored values are what the API shows.
 * Any other unknown property is still refused (400 invalid_request).
 */
export const serverOwnedFields = [
  'id',
  'projectId',
  'r2Key',
  'sha256',
  'uploadedBy',
  'status',
  'createdAt',
  'updatedAt',
  'variantStatus',
  'variants',
  'flowKey',
] as const

/** Every spelling of the server-owned fields a client may send: `uploadedBy` and `uploaded_by`. */
export const serverOwnedNames: readonly string[] = [
  ...new Set(serverOwnedFields.flatMap((f) => [f, f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)])),
]

/** The collection name of files attached to no collection. */
export const SYSTEM_COLLECTION = '__system'
/** core-api § Limits. */
export const limits = {
  uploadUrlSeconds: 120,
  downloadUrlSeconds: 300,
  maxFileBytes: 100 * 1024 * 1024,
  /** Proxy upload and replace stream through the service: "about 95 MB". */
  maxProxyBytes: 95 * 1024 * 1024,
  /** A client-made preview attached with POST /:id/variant. */
  maxClientVariantBytes: 10 * 1024 * 1024,
  regeneratePageDefault: 10,
  regeneratePageMax: 50,
} as const

export function parseVariants(raw: string): VariantState {
  try {
    const parsed = JSON.parse(raw) as Partial<VariantState>
    return { status: parsed.status ?? 'none', items: parsed.items ?? {} }
  } catch {
    return { status: 'none', items: {} }
  }
}

export function emptyVariants(status: VariantStatus = 'none'): string {
  return JSON.stringify({ status, items: {} } satisfies VariantState)
}

export function toWire(row: FileRow): FileWire {
  const state = parseVariants(row.variants)
  const variants: FileWire['variants'] = {}
  for (const [name, v] of Object.entries(state.items)) {
    variants[name] = {
      r2Key: v.key,
      width: v.width,
      height: v.height,
      sizeBytes: v.sizeBytes,
      mimeType: v.mimeType,
      source: v.source,
    }
  }
  return {
    id: row.id,
    projectId: row.project_id,
    collectionName: row.collection_name,
    r2Key: row.r2_key,
    filename: row.filename,
    mimeType: row.mime_type,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    uploadedBy: row.uploaded_by,
    visibility: row.visibility,
    status: row.status,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    variantStatus: state.status,
    variants,
    flowKey: row.flow_key ?? null,
  }
}

/** Who owns what a caller uploads: its user, or the key itself for a service key; null for anonymous callers. */
export function ownerOf(principal: Principal): string | null {
  if (principal.userId) return principal.userId
  if (principal.kind === 'api_key' && principal.apiKeyId) return `key:${principal.apiKeyId}`
  return null
}

/**
 * A filename safe as the last segment of an object key: letters, digits, dot, dash and underscore; other
 * characters become `_`, runs of dots one dot (object keys refuse `..`); never empty, never starting with a
 * dot, at most 120 characters (the extension kept).
 */
export function safeFilename(filename: string): string {
  let safe = filename
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\w.-]+/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.]+/, '_')
  if (safe.length > 120) {
    const dot = safe.lastIndexOf('.')
    const ext = dot > 0 && safe.length - dot <= 16 ? safe.slice(dot) : ''
    safe = safe.slice(0, 120 - ext.length) + ext
  }
  return safe === '' ? 'file' : safe
}

/**
 * Where an upload URL writes: a key of its own, outside `files/`, so bytes PUT through the URL again can
 * never reach the key the confirmed file is served from (confirm-upload copies them there).
 */
export function uploadKey(projectId: string, id: string, filename: string): string {
  return `projects/${projectId}/uploads/${id}/${safeFilename(filename)}`
}

export function originalKey(projectId: string, id: string, filename: string, revision?: string, prefix = ''): string {
  // A container's prefix (checked when saved: plain segments) goes before the id, inside the project's part.
  const base = `projects/${projectId}/files/${prefix === '' ? '' : `${prefix}/`}${id}`
  return revision ? `${base}/${revision}/${safeFilename(filename)}` : `${base}/${safeFilename(filename)}`
}

/** The container prefix a file's original was stored under (`a/b` of `projects/<p>/files/a/b/<id>/…`); `""` for none. */
export function prefixOf(row: Pick<FileRow, 'id' | 'r2_key'>): string {
  const parts = row.r2_key.split('/')
  if (parts[2] !== 'files') return ''
  const at = parts.indexOf(row.id, 3)
  return at > 3 ? parts.slice(3, at).join('/') : ''
}

/** Where a file's variants go: beside its original's prefix, under the project's `variants/`. */
function variantBase(row: Pick<FileRow, 'id' | 'r2_key' | 'project_id'>, sha256: string): string {
  const prefix = prefixOf(row)
  return `projects/${row.project_id}/variants/${prefix === '' ? '' : `${prefix}/`}${row.id}/${sha256.slice(0, 16)}`
}

/** Variants live under their own prefix, keyed by the content they were made from, so a stale run never overwrites a fresh one. */
export function variantKey(
  row: Pick<FileRow, 'id' | 'r2_key' | 'project_id'>,
  sha256: string,
  name: string,
  mimeType: string,
): string {
  return `${variantBase(row, sha256)}/${name}.${extensionOf(mimeType)}`
}

/** A client-made preview: its own revision in the key, so a new one never overwrites the one being served. */
export function clientVariantKey(
  row: Pick<FileRow, 'id' | 'r2_key' | 'project_id'>,
  sha256: string,
  name: string,
  revision: string,
  mimeType: string,
): string {
  return `${variantBase(row, sha256)}/${name}-${revision}.${extensionOf(mimeType)}`
}

const extensions: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
}

function extensionOf(mimeType: string): string {
  return extensions[mimeType.split(';')[0]!.trim()] ?? 'bin'
}

/** The types the server makes variants of. */
export function isResizable(mimeType: string): boolean {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase()
  return essence === 'image/jpeg' || essence === 'image/png'
}
