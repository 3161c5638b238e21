import { queryInteger, z } from '../../lib/http/index.js'

/** Limits of a saved view (docs/views.md). */
export const viewLimits = { maxFields: 200, maxLimit: 100, defaultLimit: 25, maxLayoutOptionsBytes: 16_384 } as const

export const viewLayouts = ['table', 'cards', 'calendar', 'map', 'kanban'] as const

const filterSchema = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown()).max(1000)])
  .openapi({ description: 'A filter in either format of the records API, checked against the collection when saved' })

const layoutOptionsSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= viewLimits.maxLayoutOptionsBytes, {
    message: `at most ${viewLimits.maxLayoutOptionsBytes} bytes of JSON`,
  })
  .openapi({
    description: "The layout's own settings (a kanban's group field, a calendar's date field…), kept as sent",
  })

/** The part of a view that says how to look at the collection. */
const definitionShape = {
  filter: filterSchema.nullable().optional(),
  sortBy: z
    .string()
    .min(1)
    .max(100)
    .nullable()
    .optional()
    .openapi({ description: 'One field, ascending; a leading - sorts descending' }),
  fields: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(viewLimits.maxFields)
    .nullable()
    .optional()
    .openapi({ description: 'The columns; every field the reader may read when null. Hidden ones are left out' }),
  limit: z.number().int().min(1).max(viewLimits.maxLimit).optional().openapi({ description: 'Records per page' }),
  search: z.string().min(1).max(200).nullable().optional(),
  layout: z.enum(viewLayouts).optional(),
  layoutOptions: layoutOptionsSchema.optional(),
}

export const CreateViewSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    collection: z.string().min(1).max(100),
    shared: z
      .boolean()
      .default(false)
      .openapi({ description: 'Seen by the whole project (needs system/views:update)' }),
    ...definitionShape,
    // Defaults stated in the schema, so a body read back from a view is the body that made it.
    limit: definitionShape.limit.default(viewLimits.defaultLimit),
    layout: definitionShape.layout.default('table'),
    layoutOptions: definitionShape.layoutOptions.default({}),
  })
  .openapi('CreateView')

export const UpdateViewSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    shared: z.boolean().optional(),
    ...definitionShape,
  })
  .openapi('UpdateView')

type CreateViewOutput = z.output<typeof CreateViewSchema>
/** What the service takes: the route's parsed body, whose defaults an in-process caller may leave out. */
export type CreateViewInput = Omit<CreateViewOutput, 'limit' | 'layout' | 'layoutOptions'> &
  Partial<Pick<CreateViewOutput, 'limit' | 'layout' | 'layoutOptions'>>
export type UpdateViewInput = z.output<typeof UpdateViewSchema>

/** What is stored as the definition: everything but name, collection and sharing. */
export interface ViewDefinition {
  filter: Record<string, unknown> | unknown[] | null
  sortBy: string | null
  fields: string[] | null
  limit: number
  search: string | null
  layout: (typeof viewLayouts)[number]
  layoutOptions: Record<string, unknown>
}

export const ViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    collection: z.string(),
    shared: z.boolean(),
    ownerId: z.string().nullable().openapi({ description: 'Who owns a personal view (and made a shared one)' }),
    filter: filterSchema.nullable(),
    sortBy: z.string().nullable(),
    fields: z.array(z.string()).nullable(),
    limit: z.number().int(),
    search: z.string().nullable(),
    layout: z.enum(viewLayouts),
    layoutOptions: z.record(z.string(), z.unknown()),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('View')

export type View = z.output<typeof ViewSchema>

export const ViewRecordsQuerySchema = z.object({
  page: queryInteger({ min: 1, default: 1 }),
  limit: queryInteger({ min: 1, max: viewLimits.maxLimit }).optional().openapi({
    description: "Records per page; the view's limit when absent",
  }),
  cursor: z.string().max(2048).optional().openapi({ description: 'Keyset mode; send it empty for the first page' }),
  filter: z
    .string()
    .max(16_384)
    .optional()
    .openapi({ description: "A filter ANDed with the view's (either format, as the list API takes it)" }),
  sortBy: z.string().max(100).optional().openapi({ description: "Sorts instead of the view's sortBy" }),
  order: z.enum(['asc', 'desc']).optional(),
})
