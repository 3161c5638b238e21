import { pickShape } from '../../lib/create-shape.js'
import type { LensAttachment } from './schemas.js'

/** The body of POST /lens-attachments that makes this attachment again (the lens by its id). */
export function lensAttachmentCreateShape(attachment: LensAttachment): Record<string, unknown> {
  return pickShape(attachment, ['lensId', 'collection', 'placement', 'label'])
}
