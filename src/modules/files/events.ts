import type { Principal } from '../../lib/principal.js'
import type { FileWire } from './model.js'

/** Published once a file's bytes are stored and it is complete (confirm-upload, or the proxy upload). */
export interface FileEvents extends Record<string, unknown> {
  'file.upload': FileUploadEvent
}

export interface FileUploadEvent {
  projectId: string
  file: FileWire
  /** `token`: upload-token, PUT, confirm-upload; `proxy`: POST /api/v1/files/upload. */
  via: 'token' | 'proxy'
  actor: { kind: Principal['kind']; userId: string | null }
  at: number
}
