import { pickShape } from '../../lib/create-shape.js'

/**
 * The body of POST /webhooks that makes this webhook again. The secret and header values come back as
 * their masks (never read back): a planner treats a mask as "a value is stored" (decision 052's masking).
 */
export function webhookCreateShape(webhook: Record<string, unknown>): Record<string, unknown> {
  return pickShape(webhook, ['name', 'collection', 'events', 'url', 'secret', 'headers', 'active'])
}
