import { z } from '../../lib/http/index.js'

/** Where a renderer is used: a card in a grid, a record's detail page, one row of a list. */
export const rendererKinds = ['card', 'detail', 'row'] as const

/** Limits of a renderer (docs/renderers.md). */
export const rendererLimits = {
  /** Longest template source. */
  maxTemplate: 50_000,
  /** Longest rendered output: one record's presentation. */
  maxOutput: 1_000_000,
  /** Most work one render may do (sections over a record's lists multiply; decision 046). */
  maxSteps: 200_000,
} as const

const name = z.string().trim().min(1).max(200)
const collection = z.string().min(1).max(100)
const template = z.string().max(rendererLimits.maxTemplate).openapi({
  description:
    "A logic-less section template over one record ({{title}}, {{#tags}}{{.}}{{/tags}}, {{^note}}…{{/note}}); every value HTML-escaped, names checked against the collection's fields when saved",
})

export const CreateRendererSchema = z
  .strictObject({ name, collection, kind: z.enum(rendererKinds), template })
  .openapi('CreateRenderer')

export const UpdateRendererSchema = z
  .strictObject({
    name: name.optional(),
    collection: collection.optional(),
    kind: z.enum(rendererKinds).optional(),
    template: template.optional(),
  })
  .openapi('UpdateRenderer')

export const RenderRecordSchema = z.strictObject({ recordId: z.string().min(1).max(64) }).openapi('RenderRecord')

export const RendererSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    collection: z.string(),
    kind: z.enum(rendererKinds),
    template: z.string(),
    createdBy: z.string().nullable(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Renderer')

export const RenderedRecordSchema = z
  .object({
    rendererId: z.string(),
    recordId: z.string(),
    kind: z.enum(rendererKinds),
    html: z.string().openapi({ description: 'The rendered HTML fragment; record values escaped' }),
  })
  .openapi('RenderedRecord')

export type CreateRendererInput = z.output<typeof CreateRendererSchema>
export type UpdateRendererInput = z.output<typeof UpdateRendererSchema>
export type Renderer = z.output<typeof RendererSchema>
export type RenderedRecord = z.output<typeof RenderedRecordSchema>
