/** True for what JSON.parse makes of `{…}`: an object whose prototype is Object.prototype or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

export const jsonDepthLimit = 64

/**
 * Why a value is not plain JSON (functions, undefined, bigint, NaN, class instances, nesting deeper than
 * `jsonDepthLimit`), or null when it is. Request bodies are JSON already; this guards internal callers.
 */
export function jsonProblem(value: unknown, depth = 0): string | null {
  if (depth > jsonDepthLimit) return `nested deeper than ${jsonDepthLimit} levels`
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a non-finite number'
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonProblem(item, depth + 1)
      if (problem) return problem
    }
    return null
  }
  if (isPlainObject(value)) {
    for (const item of Object.values(value)) {
      const problem = jsonProblem(item, depth + 1)
      if (problem) return problem
    }
    return null
  }
  return `not JSON (${typeof value})`
}
