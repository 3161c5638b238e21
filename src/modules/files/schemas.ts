import { queryInteger, z } from '../../lib/http/index.js'
import { serverOwnedNames } from './model.js'

/** The wire shapes of the files module (they also feed the OpenAPI document). */

export const VariantSchema = z.object({
  r2Key: z.string(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  sizeBytes: z.number().int(),
  mimeType: z.string(),
  source: z.enum(['server', 'client']),
})

export const FileSchema = z
  .object({
    id: z.string(),
    projectId: z.string(),
    collectionName: z.string().openapi({ description: '`__system` for unattached files' }),
    r2Key: z.string().openapi({ description: 'Full object-storage path of the original' }),
    filename: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
    sha256: z.string().nullable().openapi({ description: 'Hex SHA-256 of the bytes; null until confirmed' }),
    uploadedBy: z.string().nullable(),
    visibility: z.enum(['public', 'private']),
    status: z.enum(['pending', 'complete']),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
    variantStatus: z.enum(['none', 'pending', 'ready', 'failed']),
    variants: z.record(z.string(), VariantSchema),
    flowKey: z.string().nullable().openapi({
      description:
        'The relative path a flow wrote the file at (file_upload, file_transform, render_lens_template); null otherwise',
    }),
  })
  .openapi('File')

export const FileIdParams = z.object({ id: z.string().min(1).max(64) })

/** The server-owned fields, each accepted with any value and ignored (model.ts, serverOwnedFields). */
const ignoredServerOwned = Object.fromEntries(
  serverOwnedNames.map((name) => [
    name,
    z
      .unknown()
      .optional()
      .openapi({ description: 'Server-owned: accepted whatever its value and ignored; the stored value is shown' }),
  ]),
)

export const UploadTokenBody = z
  .object({
    filename: z.string().max(1000),
    mime_type: z.string().max(255),
    size_bytes: z.number().int().min(1),
    collection_name: z.string().min(1).max(100).optional(),
    visibility: z.enum(['public', 'private']).optional(),
    container_id: z
      .string()
      .max(100)
      .optional()
      .openapi({ description: 'A file container: its types, size, prefix, visibility and variant sizes apply' }),
    ...ignoredServerOwned,
  })
  .strict()

export const UploadTokenReply = z.object({ id: z.string(), uploadUrl: z.string(), r2Key: z.string() })
export const DownloadTokenReply = z.object({
  id: z.string(),
  downloadUrl: z.string(),
  variant: z.string().nullable().openapi({ description: 'The variant the URL serves; null for the original' }),
})
export const SuccessReply = z.object({ success: z.literal(true), message: z.string() })

export const ListQuery = z.object({
  page: queryInteger({ min: 1, max: 1_000_000, default: 1 }),
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  collection_name: z.string().min(1).max(100).optional(),
})
export const ListReply = z.object({
  data: z.array(FileSchema),
  total: z.number().int(),
  page: z.number().int(),
  limit: z.number().int(),
  hasMore: z.boolean(),
})

const RegenerateResultSchema = z.object({
  id: z.string(),
  filename: z.string(),
  status: z.enum(['regenerated', 'skipped', 'failed', 'out_of_scope']),
  reason: z.string().nullable(),
})
export const RegenerateOneReply = z.object({ data: RegenerateResultSchema.extend({ file: FileSchema }) })
export const RegenerateBody = z
  .object({
    cursor: z.string().max(64).nullable().optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .openapi({ description: 'Default 10; values above 50 are capped at 50' }),
    containerId: z.string().max(100).nullable().optional().openapi({
      description:
        'A container id (files uploaded into it) or a collection name (`__system` for unattached files); a container of that id wins; null for all',
    }),
  })
  .strict()
export const RegenerateReply = z.object({
  limit: z.number().int(),
  cursor: z.string().nullable(),
  processed: z.number().int(),
  regenerated: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  outOfScope: z.number().int(),
  results: z.array(RegenerateResultSchema),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
  total: z.number().int().nullable(),
})

/** A multipart body for the OpenAPI document only: a plain schema object, so nothing buffers it to validate it. */
export function multipartBody(
  fields: Record<string, { type: 'string'; format?: 'binary'; enum?: string[]; description: string }>,
  required: string[],
) {
  return {
    body: {
      required: true,
      content: { 'multipart/form-data': { schema: { type: 'object' as const, properties: fields, required } } },
    },
  }
}
