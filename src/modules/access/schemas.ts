import { z } from '../../lib/http/index.js'

export const RoleSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    adminAccess: z.boolean(),
    builtIn: z.boolean(),
    createdAt: z.number().int(),
    updatedAt: z.number().int(),
  })
  .openapi('Role')

export const roleName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{1,49}$/, 'must be 2-50 lower-case letters, digits, - or _, starting with a letter')

// Defaults stated in the schema, so a role read back is the body that made it.
export const CreateRoleSchema = z.object({
  name: roleName,
  description: z.string().max(500).default(''),
  adminAccess: z.boolean().default(false),
})

export const UpdateRoleSchema = z.object({
  name: roleName.optional(),
  description: z.string().max(500).optional(),
  adminAccess: z.boolean().optional(),
})

export const GrantSchema = z
  .object({
    resource: z.string().openapi({ example: 'collections/articles' }),
    action: z.string().openapi({ example: 'read' }),
    item_filter: z
      .unknown()
      .optional()
      .openapi({ description: 'Row scope: a filter in the object format; dynamic variables allowed' }),
    fields: z
      .array(z.string())
      .nullable()
      .optional()
      .openapi({ description: 'Readable and writable columns; omit for all' }),
  })
  .openapi('Grant')

export const ReplaceGrantsSchema = z.object({ grants: z.array(GrantSchema) })

export const RoleIdParams = z.object({ id: z.string().min(1).max(64) })
