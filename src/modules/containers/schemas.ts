import { z } from '../../lib/http/index.js'

/**
 * Request shapes are structural here (types only): the rules of a definition (sizes, names, the prefix,
 * the byte ceiling, media types) are checked by the service, so a bad one is 422 validation_error naming
 * its path (`imageSizes[0].size`), as every builder resource answers (see rules.ts).
 */
const ImageSizeInput = z.object({ name: z.string(), size: z.number() }).openapi('ContainerImageSizeInput')

const definitionFields = {
  storageConnectionId: z
    .string()
    .nullable()
    .openapi({ description: "A storage connection of the project; null is the instance's own storage" }),
  bucketName: z
    .string()
    .nullable()
    .openapi({ description: "With a storage connection: the bucket (null: the connection's own)" }),
  prefix: z.string().openapi({ description: 'Key prefix files land under: a/b/c segments, "" for none' }),
  visibility: z.enum(['public', 'private']).openapi({ description: 'Visibility of an upload that names none' }),
  imageSizes: z
    .array(ImageSizeInput)
    .openapi({ description: 'Variants made of its JPEG and PNG images (beside the thumbnail)' }),
  maxFileBytes: z.number().nullable().openapi({ description: 'Largest upload; null: the upload route’s own ceiling' }),
  allowedTypes: z.array(z.string()).openapi({ description: 'Media types accepted (image/png, image/*); [] any' }),
}

export const CreateContainerSchema = z
  .strictObject({
    name: z.string(),
    storageConnectionId: definitionFields.storageConnectionId.default(null),
    bucketName: definitionFields.bucketName.default(null),
    prefix: definitionFields.prefix.default(''),
    visibility: definitionFields.visibility.default('public'),
    imageSizes: definitionFields.imageSizes.default([]),
    maxFileBytes: definitionFields.maxFileBytes.default(null),
    allowedTypes: definitionFields.allowedTypes.default([]),
  })
  .openapi('CreateContainer')

export const UpdateContainerSchema = z
  .strictObject({
    name: z.string().optional(),
    storageConnectionId: definitionFields.storageConnectionId.optional(),
    bucketName: definitionFields.bucketName.optional(),
    prefix: definitionFields.prefix.optional(),
    visibility: definitionFields.visibility.optional(),
    imageSizes: definitionFields.imageSizes.optional(),
    maxFileBytes: definitionFields.maxFileBytes.optional(),
    allowedTypes: definitionFields.allowedTypes.optional(),
  })
  .openapi('UpdateContainer')

export const ContainerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    storageConnectionId: z.string().nullable(),
    bucketName: z.string().nullable(),
    prefix: z.string(),
    visibility: z.enum(['public', 'private']),
    imageSizes: z.array(z.object({ name: z.string(), size: z.number().int() })),
    maxFileBytes: z.number().int().nullable(),
    allowedTypes: z.array(z.string()),
    createdBy: z.string().nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Container')

export type CreateContainerInput = z.infer<typeof CreateContainerSchema>
export type UpdateContainerInput = z.infer<typeof UpdateContainerSchema>
export type Container = z.infer<typeof ContainerSchema>
/** The definition a create takes, every field present (what rules.ts checks). */
export type ContainerDefinition = Omit<Container, 'id' | 'createdBy' | 'createdAt' | 'updatedAt'>
