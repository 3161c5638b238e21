import type { Readable } from 'node:stream'

/** What `head` reports about a stored object. */
export interface StoredObject {
  sizeBytes: number
  contentType: string | null
}

/**
 * One bucket-like place to keep bytes under slash-separated keys
 * (`projects/<projectId>/...`). Two drivers: the embedded local one and any
 * S3-compatible store.
 */
export interface ObjectStorage {
  readonly kind: 'local' | 's3'
  /** A URL the client PUTs raw bytes to, valid `expiresIn` s; refuses a body larger than `sizeBytes` or of another Content-Type. */
  presignPut(key: string, options: { contentType: string; sizeBytes: number; expiresIn: number }): Promise<string>
  /** A URL that GETs the object for `expiresIn` s; `filename` sets Content-Disposition. */
  presignGet(key: string, options: { expiresIn: number; filename?: string; contentType?: string }): Promise<string>
  put(key: string, body: Buffer | Readable, options: { contentType: string; sizeBytes?: number }): Promise<void>
  /** The object's bytes as a stream, or null when absent. */
  get(key: string): Promise<Readable | null>
  head(key: string): Promise<StoredObject | null>
  delete(key: string): Promise<void>
  /** Up to `limit` keys under `prefix` (proves credentials work for storage connections). */
  list(prefix: string, limit: number): Promise<string[]>
  close(): Promise<void>
}
