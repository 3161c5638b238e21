import { z } from '../../lib/http/index.js'
import { navigationLimits } from './tree.js'
import { navigationTargetKinds } from './targets.js'

// The kind is checked by the service against the registry (422 naming target.kind), not here (400).
const TargetSchema = z
  .strictObject({
    kind: z.string().max(40).openapi({ enum: navigationTargetKinds, description: 'What the item opens' }),
    ref: z.string().max(2000).openapi({
      description: 'A view id, a collection name, a lens id, a flow id, or an absolute http(s) URL',
    }),
  })
  .openapi('NavigationTarget')

const label = z.string().trim().min(1).max(200)
const icon = z.string().trim().min(1).max(100).nullable()
const itemId = z.string().min(1).max(64)
const sortOrder = z.number().int().min(0).max(1_000_000)

export const CreateNavigationItemSchema = z
  .strictObject({
    label,
    icon: icon.default(null),
    target: TargetSchema,
    parentId: itemId.nullable().default(null),
    sortOrder: sortOrder.optional().openapi({ description: 'After its last sibling when absent' }),
  })
  .openapi('CreateNavigationItem')

export const UpdateNavigationItemSchema = z
  .strictObject({
    label: label.optional(),
    icon: icon.optional(),
    target: TargetSchema.optional(),
    parentId: itemId.nullable().optional(),
    sortOrder: sortOrder.optional(),
  })
  .openapi('UpdateNavigationItem')

export const NavigationOrderSchema = z
  .strictObject({
    items: z
      .array(z.strictObject({ id: itemId, parentId: itemId.nullable(), sortOrder }))
      .max(navigationLimits.maxItems)
      .openapi({ description: 'Every item of the project, each once, with its new place' }),
  })
  .openapi('NavigationOrder')

const itemShape = {
  id: z.string(),
  label: z.string(),
  icon: z.string().nullable(),
  target: z.object({ kind: z.enum(navigationTargetKinds as [string, ...string[]]), ref: z.string() }),
  parentId: z.string().nullable(),
  sortOrder: z.number().int(),
}

export const NavigationItemSchema = z
  .object({ ...itemShape, createdBy: z.string().nullable(), createdAt: z.number().int(), updatedAt: z.number().int() })
  .openapi('NavigationItem')

// Children are nodes of the same shape; described rather than declared recursively, which the OpenAPI generator does not follow.
export const NavigationNodeSchema = z
  .object({
    ...itemShape,
    children: z.array(z.any()).openapi({ description: 'The visible children, each a NavigationNode, by sortOrder' }),
  })
  .openapi('NavigationNode')

export type CreateNavigationItemInput = z.output<typeof CreateNavigationItemSchema>
export type UpdateNavigationItemInput = z.output<typeof UpdateNavigationItemSchema>
export type NavigationOrderInput = z.output<typeof NavigationOrderSchema>
export type NavigationItem = z.output<typeof NavigationItemSchema>

/** A node of the tree: an item with its visible children (nodes too). */
export type NavigationNode = z.output<typeof NavigationNodeSchema>
