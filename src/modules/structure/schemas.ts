import { queryInteger, z } from '../../lib/http/index.js'
import { scanPageLimits } from './service.js'

export const CollectionParams = z.object({ name: z.string().min(1).max(100) })
export const FieldParams = CollectionParams.extend({ field: z.string().min(1).max(100) })
export const JobParams = CollectionParams.extend({ jobId: z.string().min(1).max(64) })

const locale = z
  .string()
  .max(40)
  .optional()
  .openapi({ description: 'BCP-47 locale for labels; default: the project’s default locale' })

export const FieldOptionsQuery = z.object({ locale })
export const CollectionOptionsQuery = z.object({
  fields: z
    .string()
    .max(2000)
    .optional()
    .openapi({ description: 'Comma-separated field names; default: every readable field' }),
  locale,
})

export const ScanQuery = z.object({
  cursor: z.string().max(512).optional().openapi({ description: 'nextCursor of the previous batch' }),
  limit: queryInteger({ min: 1, max: scanPageLimits.max, default: scanPageLimits.default }),
})

export const RepairBody = z.object({
  fixes: z
    .unknown()
    .optional()
    .openapi({
      description: 'Up to 50 fixes { kind, path, from, to }: a group’s code, path, from and suggestion',
      example: [{ kind: 'enum', path: 'biome[]', from: 'Fores', to: 'Forest' }],
    }),
})

const OptionSetSchema = z
  .object({
    path: z.string(),
    label: z.string(),
    multiple: z.boolean(),
    values: z.array(z.object({ value: z.string(), label: z.string() })),
  })
  .openapi('OptionSet')

export const FieldOptionsSchema = z
  .object({ field: z.string(), type: z.string(), optionSets: z.array(OptionSetSchema) })
  .openapi('FieldOptions')
export const CollectionOptionsSchema = z.object({ collection: z.string(), fields: z.array(FieldOptionsSchema) })

const GroupSchema = z
  .object({
    code: z.enum(['enum', 'unknown-key', 'key', 'type']),
    path: z.string(),
    detail: z.string(),
    count: z.number().int(),
    suggestion: z.string().nullable(),
    sampleIds: z.array(z.string()),
    from: z.string().optional(),
  })
  .openapi('StructureGroup')

const EstimateSchema = z.object({ total: z.number().int(), upperBound: z.number().int(), narrowed: z.boolean() })

export const ScanPageSchema = z.object({
  checked: z.number().int(),
  invalid: z.number().int(),
  nextCursor: z.string().nullable(),
  estimate: EstimateSchema.optional(),
  groups: z.array(GroupSchema),
})

export const JobSchema = z
  .object({
    jobId: z.string(),
    kind: z.enum(['scan', 'repair']),
    collection: z.string(),
    field: z.string(),
    status: z.enum(['running', 'complete', 'cancelled', 'superseded', 'failed']),
    checked: z.number().int(),
    invalid: z.number().int(),
    estimate: EstimateSchema.nullable(),
    groups: z.array(GroupSchema),
    cursor: z.string().nullable(),
    startedAt: z.number().int().openapi({ description: 'Milliseconds' }),
    updatedAt: z.number().int().openapi({ description: 'Milliseconds' }),
    error: z.string().optional(),
    repair: z
      .object({
        fixes: z.number().int(),
        repaired: z.number().int(),
        skipped: z.number().int(),
        failed: z.number().int(),
        failures: z.array(z.object({ id: z.string(), reason: z.string() })),
      })
      .optional(),
  })
  .openapi('StructureJob')
