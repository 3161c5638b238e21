export { createLensAttachmentsModule, type LensAttachmentsModuleDeps } from './module.js'
export type { LensAttachment } from './schemas.js'
export {
  createLensAttachmentsService,
  LENS_ATTACHMENTS_RESOURCE,
  type LensAttachmentsDeps,
  type LensAttachmentsService,
} from './service.js'
export { lensAttachmentCreateShape } from './create-shape.js'
