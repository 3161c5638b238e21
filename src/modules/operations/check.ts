import type { z } from 'zod'
import { AppError } from '../../lib/errors.js'
import { checkTemplate } from '../../lib/template/index.js'
import { formatPath, templateOnPath, valueAt, valuesAt, visitStrings } from './config-paths.js'
import { parseRule, templateRoots } from './rules.js'
import { NestedStepSchema } from './schema-helpers.js'
import type { CheckStepsOptions, OperationDefinition, StepNode } from './types.js'

/** How deep step lists nest (a loop in a condition branch in a loop …). */
const maxNesting = 8
/** The most steps one flow holds, nested ones included. */
export const maxStepsPerFlow = 500

interface Issue {
  readonly path: string
  readonly message: string
}

/**
 * The save-time check of a flow's steps (OperationRegistry.checkSteps), nested steps included. Throws
 * AppError validation_error (422) at the first step with a problem; the message names the step's place,
 * key and the config path (`operations[2] (key 'total') config.values: …`), details carry
 * `{ step, path, issues }`.
 */
export function checkStepList(
  steps: readonly StepNode[],
  lookup: (type: string) => OperationDefinition | undefined,
  options: CheckStepsOptions = {},
): void {
  const seen = new Map<string, string>()
  let count = 0

  function checkList(list: readonly unknown[], at: string, depth: number): void {
    if (depth > maxNesting) fail(at, null, [{ path: at, message: `steps nest at most ${maxNesting} levels deep` }])
    list.forEach((raw, index) => {
      count += 1
      const place = `${at}[${index}]`
      if (count > maxStepsPerFlow)
        fail(place, null, [
          { path: place, message: `a flow holds at most ${maxStepsPerFlow} steps, nested ones included` },
        ])
      checkStep(raw, place, depth)
    })
  }

  function checkStep(raw: unknown, place: string, depth: number): void {
    // Top-level steps were parsed by the flow's own schema; nested ones arrive as plain config values.
    const shape = NestedStepSchema.safeParse(raw)
    const key = typeof (raw as { key?: unknown })?.key === 'string' ? (raw as { key: string }).key : null
    if (!shape.success) fail(place, key, zodIssues(shape.error.issues, place))
    const step = raw as StepNode
    const seenAt = seen.get(step.key)
    if (seenAt)
      fail(place, step.key, [
        {
          path: `${place}.key`,
          message: `the key is already used by ${seenAt}; keys are unique in a flow, nested steps included`,
        },
      ])
    seen.set(step.key, place)
    const definition = lookup(step.type)
    if (!definition)
      fail(place, step.key, [{ path: `${place}.type`, message: `unknown operation type '${step.type}'` }])
    if (definition.system && !options.system)
      fail(place, step.key, [{ path: `${place}.type`, message: `'${step.type}' runs in system-managed flows only` }])
    const config = step.config ?? {}
    const configAt = `${place}.config`
    const parsed = definition.configSchema.safeParse(config)
    if (!parsed.success) {
      const kept = parsed.error.issues
        .filter(
          (issue) =>
            (issue as { params?: { rule?: boolean } }).params?.rule === true || !templateOnPath(config, issue.path),
        )
        .filter((issue) => !missingAllowed(options, step.type, config, issue))
      if (kept.length > 0) fail(place, step.key, zodIssues(kept, configAt))
    }
    const templateIssues: Issue[] = []
    visitStrings(config, definition.rawPaths, (text, path) => {
      const error = checkTemplate(text, { roots: templateRoots })
      if (error) templateIssues.push({ path: formatPath(path, configAt), message: error.message })
    })
    if (templateIssues.length > 0) fail(place, step.key, templateIssues)
    if (step.condition !== undefined && step.condition !== null) {
      const rule = parseRule(step.condition)
      if (!rule.ok)
        fail(
          place,
          step.key,
          rule.issues.map((issue) => ({ path: formatPath(issue.path, `${place}.condition`), message: issue.message })),
        )
    }
    for (const pattern of definition.nestedSteps ?? []) {
      for (const { path, value } of valuesAt(config, pattern)) {
        if (Array.isArray(value)) checkList(value, formatPath(path, configAt), depth + 1)
      }
    }
  }

  checkList(steps, 'operations', 0)
}

/** True when the issue is a value missing where the caller allows it (a draft's credential not yet given). */
function missingAllowed(options: CheckStepsOptions, type: string, config: unknown, issue: z.core.$ZodIssue): boolean {
  if (!options.missingAllowed || issue.code !== 'invalid_type') return false
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol')
  return valueAt(config, path) === undefined && options.missingAllowed(type, path)
}

function zodIssues(issues: readonly z.core.$ZodIssue[], at: string): Issue[] {
  return issues.slice(0, 20).map((issue) => ({
    path: formatPath(
      issue.path.filter((p): p is string | number => typeof p !== 'symbol'),
      at,
    ),
    message: issue.message,
  }))
}

function fail(place: string, key: string | null, issues: Issue[]): never {
  const first = issues[0]!
  const label = key === null ? place : `${place} (key '${key}')`
  const within = first.path.startsWith(place) ? first.path.slice(place.length).replace(/^\./, '') : first.path
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  throw new AppError('validation_error', `${label}${within ? ` ${within}` : ''}: ${first.message}${more}`, {
    step: key,
    path: first.path,
    issues,
  })
}
