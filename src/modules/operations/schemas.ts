import { z } from '../../lib/http/index.js'

const categories = [
  'data',
  'logic',
  'transform',
  'ai',
  'files',
  'network',
  'script',
  'communication',
  'system',
] as const

export const FormFieldSchema = z
  .object({
    name: z.string(),
    type: z.string().openapi({ description: 'string, number, integer, boolean, array, object or any' }),
    required: z.boolean(),
    default: z.unknown().optional(),
    options: z.array(z.unknown()).optional().openapi({ description: 'The values of an enum field' }),
    min: z.number().optional(),
    max: z.number().optional(),
    description: z.string().optional(),
  })
  .openapi('OperationFormField')

const summary = {
  type: z.string().openapi({ example: 'math' }),
  name: z.string().openapi({ example: 'Math' }),
  category: z.enum(categories),
  description: z.string(),
  system: z.boolean().openapi({ description: 'Runs in system-managed flows only' }),
}

export const CatalogEntrySchema = z
  .object({ ...summary, fields: z.array(FormFieldSchema) })
  .openapi('OperationCatalogEntry')
export const OperationDescriptionSchema = z
  .object({
    ...summary,
    schema: z.record(z.string(), z.unknown()).openapi({ description: 'The config as JSON Schema (draft 2020-12)' }),
  })
  .openapi('OperationDescription')
