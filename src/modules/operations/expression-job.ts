/** What an evaluator child is sent: the expressions of one step (or one run_expression) and what they read. */
export interface ExpressionJob {
  readonly codes: readonly string[]
  /** JSONata's own timeout for each expression, in ms. */
  readonly timeoutMs: number
  readonly scope: ExpressionScope
}

/**
 * Whom an expression reads. `context`: a template's (`$trigger`, `$steps`…: the object is the input `$`,
 * and each of its `$` keys but `$now` is a variable). `variables`: run_expression's, with the variable
 * named by `input` (or nothing) as the input.
 */
export type ExpressionScope =
  | { readonly kind: 'context'; readonly data: Readonly<Record<string, unknown>> }
  | { readonly kind: 'variables'; readonly variables: Readonly<Record<string, unknown>>; readonly input: string | null }

/**
 * One expression's answer. `syntax`: it does not parse; `timeout`: past its time (JSONata's own check, or
 * its evaluator was killed); `limit`: a string, list or result over the bounds, or the evaluator's
 * memory; `failed`: anything else JSONata throws. `code` and `position` are JSONata's where it gave them.
 */
export type ExpressionOutcome =
  | { readonly ok: true; readonly value?: unknown }
  | {
      readonly ok: false
      readonly kind: 'syntax' | 'timeout' | 'limit' | 'failed'
      readonly message: string
      readonly code?: string
      readonly position?: number
    }
