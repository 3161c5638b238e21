import type { PrincipalSnapshot } from '../../lib/events/index.js'
import type { FileWire } from './model.js'

/** Published once a file's bytes are stored and it is complete (confirm-upload, or the proxy upload); docs/events.md. */
export interface FileEvents extends Record<string, unknown> {
  'file.upload': FileUploadEvent
}

export interface FileUploadEvent {
  projectId: string
  /** The file as GET /api/v1/files/:id shows it. */
  file: FileWire
  /** `token`: upload-token, PUT, confirm-upload; `proxy`: POST /api/v1/files/upload; `flow`: a new file written by a flow (file_upload, file_transform, render_lens_template's saveToR2). */
  via: 'token' | 'proxy' | 'flow'
  /** Who uploaded it (the one who confirmed, for a token upload). */
  principal: PrincipalSnapshot
  at: number
}
