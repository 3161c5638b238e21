import { pickShape } from '../../lib/create-shape.js'

/** The body of POST /roles that makes this role again (its grants are their own call: grantsCreateShape). */
export function roleCreateShape(role: {
  name: string
  description: string
  adminAccess: boolean
}): Record<string, unknown> {
  return pickShape(role, ['name', 'description', 'adminAccess'])
}

/** The body of PUT /roles/:id/grants that gives a role these grants again (absent filter and fields left out). */
export function grantsCreateShape(
  grants: readonly { resource: string; action: string; item_filter?: unknown; fields?: readonly string[] | null }[],
): Record<string, unknown> {
  return { grants: grants.map((g) => pickShape(g, ['resource', 'action', 'item_filter', 'fields'])) }
}
