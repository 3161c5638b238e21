import type jsonata from 'jsonata'
import { serveJobs } from '../../lib/child-pool/index.js'
import { boundedResult, compileBounded, ExpressionLimit, loadBuiltins } from './expression-bounds.js'
import type { ExpressionJob, ExpressionOutcome, ExpressionScope } from './expression-job.js'

// An expression evaluator process (expressions.ts starts and reuses it): one job at a time, each
// expression answered as soon as it is done. Whatever an expression does to this process, the server's
// stays up; the parent kills this one when an expression outlives its time.

/** Compiled expressions kept (compiling costs more than most evaluations); the oldest goes first. */
const cacheSize = 500
const compiled = new Map<string, jsonata.Expression | { readonly syntax: ExpressionOutcome }>()
const builtins = await loadBuiltins()

function compile(code: string, timeoutMs: number): jsonata.Expression | { readonly syntax: ExpressionOutcome } {
  const key = `${timeoutMs}\u0000${code}`
  let found = compiled.get(key)
  if (found === undefined) {
    try {
      found = compileBounded(code, timeoutMs, builtins)
    } catch (err) {
      found = { syntax: failure('syntax', err) }
    }
    if (compiled.size >= cacheSize) compiled.delete(compiled.keys().next().value!)
    compiled.set(key, found)
  }
  return found
}

function failure(kind: 'syntax' | 'timeout' | 'limit' | 'failed', err: unknown): ExpressionOutcome {
  const record = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : {}
  const message = typeof record.message === 'string' ? record.message : String(err)
  return {
    ok: false,
    kind,
    message: message.slice(0, 2000),
    ...(typeof record.code === 'string' ? { code: record.code } : {}),
    ...(typeof record.position === 'number' ? { position: record.position } : {}),
  }
}

/** A bound of ours (inside `$eval` it arrives wrapped in JSONata's D3121), or V8's own on a string or list's length. */
const isLimit = (err: unknown): boolean =>
  err instanceof ExpressionLimit ||
  (err instanceof RangeError && /Invalid (string|array) length/.test(err.message)) ||
  (typeof err === 'object' && err !== null && isLimit((err as { error?: unknown }).error))

function scopeOf(scope: ExpressionScope): { input: unknown; bindings: Record<string, unknown> } {
  if (scope.kind === 'variables')
    return { input: scope.input === null ? {} : scope.variables[scope.input], bindings: { ...scope.variables } }
  const bindings: Record<string, unknown> = {}
  // `$now` stays JSONata's function (`$now()`); the run's timestamp is the template path {{$now}}.
  for (const [name, value] of Object.entries(scope.data))
    if (name.startsWith('$') && name !== '$now') bindings[name.slice(1)] = value
  return { input: scope.data, bindings }
}

async function evaluateOne(
  code: string,
  timeoutMs: number,
  input: unknown,
  bindings: Record<string, unknown>,
): Promise<ExpressionOutcome> {
  const expression = compile(code, timeoutMs)
  if ('syntax' in expression) return expression.syntax
  try {
    const value = boundedResult(await expression.evaluate(input, bindings))
    return value === undefined ? { ok: true } : { ok: true, value }
  } catch (err) {
    const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
    return failure(code === 'D1012' ? 'timeout' : isLimit(err) ? 'limit' : 'failed', err)
  }
}

serveJobs(async (job, emit) => {
  const { codes, timeoutMs, scope } = job as ExpressionJob
  const { input, bindings } = scopeOf(scope)
  for (const [index, code] of codes.entries()) emit(index, await evaluateOne(code, timeoutMs, input, bindings))
})
