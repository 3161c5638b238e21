import { pickShape } from '../../lib/create-shape.js'
import type { Renderer } from './schemas.js'

/** The body of POST /renderers that makes this renderer again. */
export function rendererCreateShape(renderer: Renderer): Record<string, unknown> {
  return pickShape(renderer, ['name', 'collection', 'kind', 'template'])
}
