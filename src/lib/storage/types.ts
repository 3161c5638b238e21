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
  /**
   * Whether an upload URL refuses a PUT once an object is stored at its key (local: yes). An S3 store
   * serves presigned PUTs itself and overwrites: callers that need single-use uploads copy the uploaded
   * object to a key no URL points at (`copy`) and serve only that.
   */
  readonly exclusiveUploads: boolean
  /**
   * A URL the client PUTs raw bytes to, valid `expiresIn` s; refuses a body of another size than `sizeBytes`
   * or of another Content-Type. Single use where the driver can enforce it (`exclusiveUploads`): once bytes
   * are stored at the key, a further PUT is refused (409 conflict) and the stored bytes stay.
   */
  presignPut(key: string, options: { contentType: string; sizeBytes: number; expiresIn: number }): Promise<string>
  /** A URL that GETs the object for `expiresIn` s; `filename` sets Content-Disposition. */
  presignGet(key: string, options: { expiresIn: number; filename?: string; contentType?: string }): Promise<string>
  put(key: string, body: Buffer | Readable, options: { contentType: string; sizeBytes?: number }): Promise<void>
  /** The object's bytes as a stream, or null when absent. */
  get(key: string): Promise<Readable | null>
  head(key: string): Promise<StoredObject | null>
  delete(key: string): Promise<void>
  /** Copies the object at `from` to `to` (replacing what is there) with its content type, inside the store; false when `from` is absent. */
  copy(from: string, to: string): Promise<boolean>
  /** Up to `limit` keys under `prefix` (proves credentials work for storage connections). */
  list(prefix: string, limit: number): Promise<string[]>
  close(): Promise<void>
}
