import { availableParallelism } from 'node:os'
import { createChildPool, type PartOutcome } from '../../lib/child-pool/index.js'
import { parseTemplate, type Parsed } from '../../lib/template/index.js'
import type { ExpressionOutcome, ExpressionScope } from './expression-job.js'
import { narrowScope } from './expression-scope.js'

/** How long one `{{= }}` expression may run. */
export const expressionTimeoutMs = 1000
/** Past an expression's own time, how long its evaluator process is given before it is killed (a builtin JSONata cannot interrupt). */
export const expressionGraceMs = 500
/** The V8 heap of each evaluator process. */
export const evaluatorHeapMb = 256

/** A sync evaluator for lib/template's `evaluate` option. */
export type Evaluate = (code: string, context: unknown) => unknown

// One pool for the whole process: evaluators are a share of the machine (a core each while they compute),
// like lib/sandbox's script workers, whatever the number of app instances. Nothing starts until the first
// expression; idle evaluators never keep the process alive, and they end with it.
const pool = createChildPool({
  entry: new URL(`./expression-child${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
  size: Math.max(2, Math.min(availableParallelism(), 4)),
  heapMb: evaluatorHeapMb,
})

/**
 * Evaluates JSONata expressions in an evaluator process (one message for all of them), each bounded by
 * `timeoutMs`, expression-bounds.ts' limits and the process's memory; only what they read is sent. A
 * process that outlives an expression's time by 500 ms is killed and replaced. `signal` ends a wait for a
 * free evaluator. One outcome per code, in order; never throws.
 */
export async function evaluateBatch(
  codes: readonly string[],
  scope: ExpressionScope,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ExpressionOutcome[]> {
  if (codes.length === 0) return []
  const job = { codes, timeoutMs, scope: narrowScope(scope, codes) }
  const outcomes = await pool.run(job, {
    parts: codes.length,
    partMs: timeoutMs + expressionGraceMs,
    ...(signal ? { signal } : {}),
  })
  return outcomes.map((outcome) => outcomeOf(outcome, timeoutMs))
}

function outcomeOf(outcome: PartOutcome, timeoutMs: number): ExpressionOutcome {
  if (outcome.ok) return outcome.value as ExpressionOutcome
  switch (outcome.reason) {
    case 'timeout':
      return {
        ok: false,
        kind: 'timeout',
        message: `The expression did not finish within ${timeoutMs} ms (its evaluator was stopped)`,
      }
    case 'memory':
      return {
        ok: false,
        kind: 'limit',
        message: `The expression needed more memory than its evaluator has (${evaluatorHeapMb} MB)`,
      }
    case 'crashed':
      return { ok: false, kind: 'failed', message: 'The expression ended its evaluator' }
    case 'skipped':
      return {
        ok: false,
        kind: 'failed',
        message: 'Not evaluated: an expression before it in the same step stopped its evaluator',
      }
    case 'unavailable':
      return { ok: false, kind: 'failed', message: 'No expression evaluator was available' }
  }
}

/** A failed outcome as the Error a template's evaluator throws (its message is what the step log shows). */
function errorOf(outcome: Extract<ExpressionOutcome, { ok: false }>): Error {
  return new Error(outcome.kind === 'syntax' ? `Invalid expression: ${outcome.message}` : outcome.message)
}

/**
 * Evaluates one JSONata expression over a template context: its roots (`$trigger`, `$steps`, …) are
 * variables, and the context is also the input (`$`). Bounded as evaluateBatch with 1 s. Resolves to
 * plain data (JSONata's sequences become arrays; functions become undefined). Rejects with an Error
 * carrying JSONata's message, or the bound that was hit.
 */
export async function evaluateExpression(code: string, data: Readonly<Record<string, unknown>>): Promise<unknown> {
  const [outcome] = await evaluateBatch([code], { kind: 'context', data }, expressionTimeoutMs)
  if (!outcome!.ok) throw errorOf(outcome!)
  return outcome!.value
}

/** The code of every `{{= }}` tag in a string (none when it does not parse: the resolver reports that). */
export function expressionCodes(text: string): string[] {
  if (!text.includes('{{')) return []
  return expressionCodesOf(parseTemplate(text))
}

/** The code of every `{{= }}` tag of a parsed template (none when it did not parse). */
export function expressionCodesOf(parsed: Parsed): string[] {
  if (!parsed.ok) return []
  return parsed.template.parts.flatMap((part) => (part.kind === 'expression' ? [part.code] : []))
}

/**
 * Evaluates the given expressions now, all in one message to an evaluator (JSONata is asynchronous), and
 * answers a synchronous evaluator for lib/template that hands back their results: a failed one throws its
 * error there, so the resolver records it as expression_failed.
 */
export async function precomputeExpressions(
  codes: Iterable<string>,
  data: Readonly<Record<string, unknown>>,
): Promise<Evaluate> {
  const unique = [...new Set(codes)]
  const outcomes = await evaluateBatch(unique, { kind: 'context', data }, expressionTimeoutMs)
  const results = new Map(unique.map((code, i) => [code, outcomes[i]!]))
  return (code) => {
    const result = results.get(code)
    if (!result) throw new Error('The expression was not evaluated')
    if (!result.ok) throw errorOf(result)
    return result.value
  }
}
