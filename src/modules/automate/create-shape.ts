import { pickShape } from '../../lib/create-shape.js'
import { CreateFlowSchema } from './flows/schemas.js'
import { parseInput } from './flows/validate.js'
import { triggerDefinition } from './triggers/registry.js'

/** The body of POST /automate/scripts that makes this script again. */
export function scriptCreateShape(script: Record<string, unknown>): Record<string, unknown> {
  return pickShape(script, ['name', 'description', 'code', 'allowed_hosts', 'max_cpu_ms', 'max_memory_mb'])
}

/**
 * The body of POST /automate/flows that makes this flow again, from its draft: credentials in step
 * configs come back masked (as in an export); who it runs as, its status and its versions are their own
 * calls.
 */
export function flowCreateShape(flow: Record<string, unknown>): Record<string, unknown> {
  return pickShape(flow, [
    'name',
    'description',
    'icon',
    'color',
    'triggerType',
    'triggerConfig',
    'operations',
    'options',
    'collections',
  ])
}

/**
 * The create shape a flow body makes, without saving it: the create route's schema (defaults filled, steps'
 * settings included) and the trigger's config with its defaults, as a saved draft holds them. Reads nothing.
 * Throws validation_error (the route's own errors).
 */
export function flowDesiredShape(body: unknown): Record<string, unknown> {
  const parsed = parseInput(CreateFlowSchema, body)
  const triggerConfig = parseInput(
    triggerDefinition(parsed.triggerType).configSchema,
    parsed.triggerConfig,
    'triggerConfig',
  )
  return flowCreateShape({ ...parsed, triggerConfig })
}
