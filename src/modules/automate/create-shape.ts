import { pickShape } from '../../lib/create-shape.js'

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
