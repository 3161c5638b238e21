import { z } from '../../lib/http/index.js'
import { lensFormats } from './formats.js'

/** Limits of a lens (docs/lenses.md). */
export const lensLimits = {
  maxRows: 1000,
  defaultRows: 100,
  maxParams: 20,
  maxTemplate: 200_000,
  maxParamText: 1000,
} as const

/** Parameter names: what `{{params.<name>}}` reads and the query string sends. `format` and `draft` are the render route's own. */
const paramName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a letter or _, then letters, digits or _ (at most 64)')
  .refine((name) => name !== 'format' && name !== 'draft', "format and draft are the render route's own parameters")

const paramValue = z.union([z.string().max(lensLimits.maxParamText), z.number(), z.boolean()])

export const LensParamSchema = z
  .strictObject({
    name: paramName,
    type: z
      .enum(['text', 'number', 'integer', 'boolean', 'date'])
      .default('text')
      .openapi({ description: 'How the query string value is read and checked; date is YYYY-MM-DD' }),
    required: z.boolean().default(false),
    default: paramValue
      .optional()
      .openapi({ description: 'Used when the query string does not send it (checked against type and values)' }),
    values: z
      .array(z.union([z.string().max(lensLimits.maxParamText), z.number()]))
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: 'The only values accepted' }),
    maxLength: z
      .number()
      .int()
      .min(1)
      .max(lensLimits.maxParamText)
      .default(200)
      .openapi({ description: 'Longest text value' }),
    description: z.string().max(500).default(''),
  })
  .openapi('LensParam')

const filterSchema = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown()).max(1000)]).openapi({
  description:
    "A filter in either format of the records API; string values may hold {{params.<name>}} (a whole-value tag keeps the parameter's type)",
})

/** What a version freezes: the query, the parameters and the templates. */
const definitionShape = {
  collection: z.string().min(1).max(100),
  filter: filterSchema.optional(),
  sort: z
    .array(z.strictObject({ field: z.string().min(1).max(200), order: z.enum(['asc', 'desc']).default('asc') }))
    .max(10)
    .default([]),
  fields: z.array(z.string().min(1).max(100)).min(1).max(200).optional().openapi({
    description:
      'The columns, in order; every field of the collection when absent. A column the caller may not read is left out of the output',
  }),
  limit: z.number().int().min(1).max(lensLimits.maxRows).default(lensLimits.defaultRows),
  params: z.array(LensParamSchema).max(lensLimits.maxParams).default([]),
  template: z
    .strictObject({
      html: z.string().max(lensLimits.maxTemplate).optional(),
      md: z.string().max(lensLimits.maxTemplate).optional(),
    })
    .default({})
    .openapi({
      description:
        'Logic-less templates ({{x}}, {{#rows}}…{{/rows}}, {{^rows}}…{{/rows}}); a table of the columns when absent. CSV is always the columns',
    }),
}

export const CreateLensSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(''),
    enabled: z.boolean().default(true),
    ...definitionShape,
  })
  .openapi('CreateLens')

export const UpdateLensSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    enabled: z.boolean().optional(),
    collection: definitionShape.collection.optional(),
    filter: filterSchema.nullable().optional(),
    sort: z
      .array(z.strictObject({ field: z.string().min(1).max(200), order: z.enum(['asc', 'desc']).default('asc') }))
      .max(10)
      .optional(),
    fields: z.array(z.string().min(1).max(100)).min(1).max(200).nullable().optional(),
    limit: z.number().int().min(1).max(lensLimits.maxRows).optional(),
    params: z.array(LensParamSchema).max(lensLimits.maxParams).optional(),
    template: z
      .strictObject({
        html: z.string().max(lensLimits.maxTemplate).optional(),
        md: z.string().max(lensLimits.maxTemplate).optional(),
      })
      .optional(),
  })
  .openapi('UpdateLens')

export const PublishLensSchema = z
  .strictObject({ changeSummary: z.string().max(500).default('') })
  .openapi('PublishLens')

export type CreateLensInput = z.output<typeof CreateLensSchema>
export type UpdateLensInput = z.output<typeof UpdateLensSchema>
export type LensParam = z.output<typeof LensParamSchema>

/** The frozen part of a lens: name and description, the query, the parameters, the templates. */
export interface LensDefinition {
  name: string
  description: string
  collection: string
  filter?: Record<string, unknown> | unknown[]
  sort: { field: string; order: 'asc' | 'desc' }[]
  fields?: string[]
  limit: number
  params: LensParam[]
  template: { html?: string; md?: string }
}

const definitionOut = {
  collection: z.string(),
  filter: filterSchema.nullable(),
  sort: z.array(z.object({ field: z.string(), order: z.enum(['asc', 'desc']) })),
  fields: z.array(z.string()).nullable(),
  limit: z.number().int(),
  params: z.array(LensParamSchema),
  template: z.object({ html: z.string().optional(), md: z.string().optional() }),
}

export const LensSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    enabled: z.boolean(),
    status: z.enum(['draft', 'published']).openapi({ description: 'published once a version exists' }),
    currentVersion: z.number().int().openapi({ description: 'The newest version (0: none yet)' }),
    publishedVersion: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The version render uses; null until the first publish' }),
    hasUnpublishedChanges: z.boolean(),
    ...definitionOut,
    createdBy: z.string().nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Lens')

export const LensVersionSchema = z
  .object({
    version: z.number().int(),
    name: z.string(),
    description: z.string(),
    ...definitionOut,
    changeSummary: z.string(),
    publishedBy: z.string().nullable(),
    publishedAt: z.number().int(),
  })
  .openapi('LensVersion')

export type Lens = z.output<typeof LensSchema>
export type LensVersion = z.output<typeof LensVersionSchema>

export const RenderQuerySchema = z.object({
  format: z.enum(lensFormats).default('html'),
  draft: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .openapi({ description: 'true: render the draft (needs system/lenses:update)' }),
})
