import { isRecord, valuesAt } from './config-paths.js'
import type { OperationDefinition, OperationEffects, OperationNeed, StepNeed, StepNode } from './types.js'

/**
 * What steps need and may do, read from their configs as saved (decision 053): the flow preflight checks
 * the needs against whom the runs will act as, and a dry run runs a step unless its effects are `writes`.
 */

/** The text of a config value known ahead: a string holding no template (trimmed; empty is null). */
export function literalText(value: unknown): string | null {
  if (typeof value !== 'string' || value.includes('{{')) return null
  const text = value.trim()
  return text === '' ? null : text
}

/** A boolean known ahead (`true`, `"true"`), false for absent or `false`, null when a template decides. */
export function literalFlag(value: unknown): boolean | null {
  if (value === undefined || value === false || value === 'false') return false
  if (value === true || value === 'true') return true
  return null
}

/** `{ collection, action }` for a collection named without a template; nothing otherwise. */
export function collectionNeed(config: Readonly<Record<string, unknown>>, action: string): OperationNeed[] {
  const name = literalText(config.collection)
  return name === null ? [] : [{ collection: name, action }]
}

/** The effects of a step as saved: its definition's `effectsWhen`, else `effects`; an unknown type writes. */
export function effectsOfStep(definition: OperationDefinition | undefined, config: unknown): OperationEffects {
  if (!definition) return 'writes'
  if (!definition.effectsWhen) return definition.effects
  return definition.effectsWhen(isRecord(config) ? config : {})
}

/** The needs of the steps and of the steps nested in them (loop bodies, branches, cases), in step order; each need once per step. */
export function needsOfSteps(
  steps: readonly unknown[],
  lookup: (type: string) => OperationDefinition | undefined,
  depth = 0,
): StepNeed[] {
  const out: StepNeed[] = []
  // Saved flows nest at most 8 levels (checkSteps); a stored oddity must not recurse without end.
  if (depth > 8) return out
  for (const raw of steps) {
    if (!isRecord(raw) || typeof raw.key !== 'string' || typeof raw.type !== 'string') continue
    const step = raw as unknown as StepNode
    const definition = lookup(step.type)
    if (!definition) continue
    const config = isRecord(step.config) ? step.config : {}
    const seen = new Set<string>()
    for (const need of definition.needs?.(config) ?? []) {
      const id = 'collection' in need ? `c:${need.collection}:${need.action}` : `r:${need.resource}:${need.action}`
      if (seen.has(id)) continue
      seen.add(id)
      out.push({ step: step.key, type: step.type, need })
    }
    for (const pattern of definition.nestedSteps ?? []) {
      for (const { value } of valuesAt(config, pattern))
        if (Array.isArray(value)) out.push(...needsOfSteps(value, lookup, depth + 1))
    }
  }
  return out
}
