import { z } from '../../lib/http/index.js'

/** Where a collection offers the lens: on one record's page, or on its list. */
export const placements = ['record', 'list'] as const

const label = z.string().trim().min(1).max(200)

export const CreateLensAttachmentSchema = z
  .strictObject({
    lensId: z.string().min(1).max(64).openapi({ description: 'A lens of this project' }),
    collection: z.string().min(1).max(100),
    placement: z.enum(placements),
    label,
  })
  .openapi('CreateLensAttachment')

export const UpdateLensAttachmentSchema = z
  .strictObject({ placement: z.enum(placements).optional(), label: label.optional() })
  .openapi('UpdateLensAttachment')

export const LensAttachmentSchema = z
  .object({
    id: z.string(),
    lensId: z.string(),
    collection: z.string(),
    placement: z.enum(placements),
    label: z.string(),
    createdBy: z.string().nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('LensAttachment')

export type CreateLensAttachmentInput = z.output<typeof CreateLensAttachmentSchema>
export type UpdateLensAttachmentInput = z.output<typeof UpdateLensAttachmentSchema>
export type LensAttachment = z.output<typeof LensAttachmentSchema>
