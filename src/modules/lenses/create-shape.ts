import { pickShape } from '../../lib/create-shape.js'

/**
 * The body of POST /lenses that makes this lens again, from its draft (what GET answers at the top level):
 * the query, parameters and templates; `filter` and `fields` left out when absent. Versions are published
 * by their own call.
 */
export function lensCreateShape(lens: Record<string, unknown>): Record<string, unknown> {
  return pickShape(lens, [
    'name',
    'description',
    'enabled',
    'collection',
    'filter',
    'sort',
    'fields',
    'limit',
    'params',
    'template',
  ])
}
