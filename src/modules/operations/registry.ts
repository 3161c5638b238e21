import { checkStepList } from './check.js'
import { effectsOfStep, needsOfSteps } from './needs.js'
import { operationCatalog } from './catalog/index.js'
import { prepareConfig, type StepAnalyses } from './prepare.js'
import { evaluateRuleTree } from './rules.js'
import { StepError, type OperationDefinition, type OperationRegistry } from './types.js'

/**
 * The operations registry over a static list of definitions (the catalog by default; tests may pass
 * their own). Throws at construction when two definitions share a type.
 */
export function createOperationRegistry(
  definitions: readonly OperationDefinition[] = operationCatalog,
): OperationRegistry {
  const byType = new Map<string, OperationDefinition>()
  for (const definition of definitions) {
    if (byType.has(definition.type)) throw new Error(`Two operations are registered as '${definition.type}'`)
    byType.set(definition.type, definition)
  }
  const list = Object.freeze([...definitions])
  const get = (type: string): OperationDefinition | undefined => byType.get(type)
  // A node's type is fixed, so within one registry its definition, and so its analysis, is too.
  const analyses: StepAnalyses = new WeakMap()
  return Object.freeze({
    get,
    list: () => list,
    checkSteps: (steps, options) => checkStepList(steps, get, options),
    async prepare(step, data) {
      const definition = get(step.type)
      if (!definition)
        throw new StepError(
          'unknown_operation',
          `Step '${step.key}': unknown operation type '${step.type}'`,
          {},
          400,
          false,
        )
      return prepareConfig(definition, step, data, analyses)
    },
    effectsOf: (step) => effectsOfStep(get(step.type), step.config),
    needsOf: (steps) => needsOfSteps(steps, get),
    // No condition (absent or null) means the step runs.
    evaluateCondition: async (tree, data) =>
      tree === undefined || tree === null ? true : evaluateRuleTree(tree, data),
  } satisfies OperationRegistry)
}
