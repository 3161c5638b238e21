import type { z } from 'zod'
import type { FlowDefinition, FlowForRun, TriggerType } from '../model.js'

/** A flow that runs on a trigger, with its published definition and that trigger's config (defaults filled in). */
export interface LiveFlow<S extends z.ZodType> {
  readonly flow: FlowForRun
  readonly definition: FlowDefinition
  readonly config: z.output<S>
}

/**
 * The flow as the trigger `type` runs it: active, published, and its published version on this trigger
 * (what production runs is the published version, whatever the draft says). Null otherwise, also when the
 * published config no longer satisfies the schema (a flow saved under an older schema is skipped, not run
 * with a config nobody checked).
 */
export function liveFlow<S extends z.ZodType>(
  flow: FlowForRun | null,
  type: TriggerType,
  schema: S,
): LiveFlow<S> | null {
  if (!flow || flow.status !== 'active') return null
  const definition = flow.published
  if (!definition || definition.triggerType !== type) return null
  // The lookup's cache hands out the same flow objects until a flow changes: parse each config once.
  const known = parsedConfigs.get(definition)
  if (known !== undefined) return known && { flow, definition, config: known.config as LiveFlow<S>['config'] }
  const parsed = schema.safeParse(definition.triggerConfig)
  parsedConfigs.set(definition, parsed.success ? { config: parsed.data } : null)
  if (!parsed.success) return null
  return { flow, definition, config: parsed.data }
}

const parsedConfigs = new WeakMap<FlowDefinition, { config: unknown } | null>()

/** True when the flow's collection scope (`collections`, default `["*"]`) covers `collection`. */
export function coversCollection(definition: FlowDefinition, collection: string): boolean {
  const scope = definition.collections.length === 0 ? ['*'] : definition.collections
  return scope.includes('*') || scope.includes(collection)
}
