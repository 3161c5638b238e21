export { createLensAttachmentsModule, type LensAttachmentsModuleDeps } from './module.js'
export type { LensAttachment } from './schemas.js'
export {
  createLensAttachmentsService,
  LENS_ATTACHMENTS_RESOURCE,
  type LensAttachmentsDeps,
  type LensAttachmentsService,
  type LensAttachmentEvents,
} from './service.js'
export { lensAttachmentCreateShape } from './create-shape.js'
/** The create and update bodies as their routes take them (blueprint bricks are parsed by the same schemas). */
export { CreateLensAttachmentSchema, UpdateLensAttachmentSchema } from './schemas.js'
