import { z } from '../../lib/http/index.js'

const FieldSchema = z.record(z.string(), z.unknown()).openapi('FieldDef', {
  example: { name: 'title', type: 'text', required: true, validationRules: { maxLength: 200 } },
})

export const CollectionSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    storageType: z.string(),
    databaseId: z.string(),
    schemaVersion: z.number().int(),
    fields: z.array(FieldSchema),
    accessControl: z.object({ preset: z.enum(['private', 'team', 'public']), sharing: z.boolean().optional() }).nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Collection')

export const CollectionDetailSchema = CollectionSchema.extend({
  columnStatuses: z.array(z.object({ name: z.string(), exists: z.boolean(), type: z.string() })),
  policyKey: z.string().openapi({ description: 'The resource name permissions on its records use' }),
}).openapi('CollectionDetail')

export const CreateCollectionSchema = z.object({
  // No length cap here: a name over 50 characters is the service's 400 invalid_name (core-api § Errors),
  // however long it is; the body size limit bounds it.
  name: z.string(),
  storageType: z.string().max(30).optional(),
  databaseId: z.string().max(64).nullable().optional(),
  fields: z.array(FieldSchema).max(500),
  accessControl: z.unknown().optional(),
})

export const UpdateCollectionSchema = z.object({
  fields: z.array(FieldSchema).max(500),
  accessControl: z.unknown().optional(),
})

export const NameParams = z.object({ name: z.string().min(1).max(100) })
