import { pickShape } from '../../lib/create-shape.js'
import type { Container } from './schemas.js'

/**
 * The body of POST /containers that makes this container again, every rule stated; the instance's own
 * storage (storageConnectionId and bucketName null) left out. Blueprints do not compare storageConnectionId,
 * bucketName and imageSizes (they belong to the instance).
 */
export function containerCreateShape(container: Container): Record<string, unknown> {
  return pickShape(
    container,
    ['name', 'storageConnectionId', 'bucketName', 'prefix', 'visibility', 'imageSizes', 'maxFileBytes', 'allowedTypes'],
    ['maxFileBytes'],
  )
}
