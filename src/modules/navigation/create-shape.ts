import { pickShape } from '../../lib/create-shape.js'
import type { NavigationItem } from './schemas.js'

/**
 * The body of POST /navigation that makes this item again: label, icon, target, its place (parentId
 * left out at the top level) and sortOrder. Blueprints compare top-level items without their sortOrder.
 */
export function navigationItemCreateShape(item: NavigationItem): Record<string, unknown> {
  return {
    ...pickShape(item, ['label', 'icon', 'parentId', 'sortOrder']),
    target: { kind: item.target.kind, ref: item.target.ref },
  }
}
