import { pickShape } from '../../lib/create-shape.js'
import type { View } from './schemas.js'

/**
 * The body of POST /views that makes this view again: its definition with defaults filled in (limit, layout,
 * layoutOptions, shared); absent parts (filter, sortBy, fields, search: null) left out. The owner is the
 * caller's, never part of the body.
 */
export function viewCreateShape(view: View): Record<string, unknown> {
  return pickShape(view, [
    'name',
    'collection',
    'shared',
    'filter',
    'sortBy',
    'fields',
    'limit',
    'search',
    'layout',
    'layoutOptions',
  ])
}
