import { pickShape } from '../../lib/create-shape.js'

/** The body of POST /search-indexes that makes this index again (its builds are its own). */
export function searchIndexCreateShape(index: Record<string, unknown>): Record<string, unknown> {
  return pickShape(index, ['name', 'description', 'sources'])
}
