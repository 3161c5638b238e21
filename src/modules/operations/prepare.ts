import { createTemplateBudget, parseTemplate, resolveTemplate, type Parsed } from '../../lib/template/index.js'
import { formatPath, mapStrings, visitStrings } from './config-paths.js'
import { expressionCodesOf, precomputeExpressions } from './expressions.js'
import { StepError, type OperationDefinition, type PreparedConfig, type StepNode } from './types.js'

type Unresolved = PreparedConfig['unresolved'][number]

/**
 * The most one step's templates may produce in all, in characters (a whole-value tag counts its value's
 * JSON): above file_upload's 10 MB of base64, far below what naming one large value thousands of times
 * in a config would otherwise copy.
 */
export const maxResolvedLength = 20_000_000

/**
 * What preparing a step needs to know of its config before any data: each template string parsed (parts
 * are frozen, so runs share them), and its `{{= }}` codes.
 */
export interface StepAnalysis {
  /** Each template string of the config (one holding `{{`), parsed; empty when the config has none. */
  readonly parsed: ReadonlyMap<string, Parsed>
  readonly codes: readonly string[]
}

/**
 * Analyses by step node, kept by the registry: a published flow's nodes sit in the active flows' cache and
 * every run of it prepares the same ones, so the walk over the config and the parse of its templates (about
 * a third of preparing, per run) are done once per node. A node is never changed once built (a flow's
 * change builds new ones).
 */
export type StepAnalyses = WeakMap<StepNode, StepAnalysis>

function analysisOf(definition: OperationDefinition, step: StepNode, analyses: StepAnalyses | undefined): StepAnalysis {
  const known = analyses?.get(step)
  if (known) return known
  const codes: string[] = []
  const parsed = new Map<string, Parsed>()
  visitStrings(step.config, definition.rawPaths, (text) => {
    if (!text.includes('{{') || parsed.has(text)) return
    const result = parseTemplate(text)
    parsed.set(text, result)
    codes.push(...expressionCodesOf(result))
  })
  const analysis = { parsed, codes }
  analyses?.set(step, analysis)
  return analysis
}

/**
 * A step's config made ready to run (OperationRegistry.prepare): every `{{= }}` code outside `rawPaths`
 * evaluated first (JSONata is asynchronous; lib/template's evaluator is not), then the templates
 * resolved over `data` (at most maxResolvedLength in all), then the schema applied (defaults filled in).
 * Throws StepError invalid_config (not retried) when the templates would produce more than that, or the
 * resolved config does not satisfy the schema.
 */
export async function prepareConfig(
  definition: OperationDefinition,
  step: StepNode,
  data: Readonly<Record<string, unknown>>,
  analyses?: StepAnalyses,
): Promise<PreparedConfig> {
  const { codes, parsed: templates } = analysisOf(definition, step, analyses)
  const unresolved: Unresolved[] = []
  let config: unknown = step.config
  if (templates.size > 0) {
    const evaluate = codes.length > 0 ? await precomputeExpressions(codes, data) : undefined
    const budget = createTemplateBudget(maxResolvedLength)
    const parse = (text: string) => templates.get(text) ?? parseTemplate(text)
    config = mapStrings(step.config, definition.rawPaths, (text, path) => {
      if (budget.exceeded) return ''
      const result = resolveTemplate(text, data, { budget, parse, ...(evaluate ? { evaluate } : {}) })
      for (const miss of result.unresolved)
        unresolved.push({ path: formatPath(path), tag: miss.tag, reason: miss.reason, message: miss.message })
      return result.value
    })
    if (budget.exceeded) {
      throw new StepError(
        'invalid_config',
        `Step '${step.key}': its templates would give more than ${maxResolvedLength} characters in all`,
        { limit: maxResolvedLength, unresolved: unresolved.slice(0, 20) },
        400,
        false,
      )
    }
  }
  const parsed = definition.configSchema.safeParse(config)
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 20).map((issue) => ({
      path: formatPath(
        issue.path.filter((p): p is string | number => typeof p !== 'symbol'),
        'config',
      ),
      message: issue.message,
    }))
    const first = issues[0]!
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
    throw new StepError(
      'invalid_config',
      `Step '${step.key}' ${first.path}: ${first.message}${more}`,
      { issues, unresolved },
      400,
      false,
    )
  }
  return { config: parsed.data, unresolved }
}
