import { isDeepStrictEqual } from 'node:util'
import { AppError } from '../../lib/errors.js'
import { jsonProblem } from '../collections/index.js'

export const jsonOperators = ['$set', '$push', '$pull', '$unset'] as const
export type JsonOperator = (typeof jsonOperators)[number]

const segment = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const forbidden = new Set(['__proto__', 'constructor', 'prototype'])

/** `meta.size` → ['meta', 'size'] (the first segment is the field). Throws invalid_request. */
export function operatorPath(path: string): [string, ...string[]] {
  const parts = path.split('.')
  if (parts.length > 16 || parts.some((p) => !segment.test(p) || forbidden.has(p))) {
    throw new AppError('invalid_request', `"${path.slice(0, 100)}" is not a field path (field.key.key…)`)
  }
  return parts as [string, ...string[]]
}

/**
 * Refuses an operand that is not plain JSON (nested deeper than the field may hold, …) before anything
 * copies or compares it: structuredClone and isDeepStrictEqual recurse, and a value nested thousands of
 * levels deep overflows the stack (a 500 before this check). `$unset` takes no value. Throws invalid_field.
 */
export function checkOperand(op: JsonOperator, path: readonly string[], value: unknown): void {
  if (op === '$unset') return
  const problem = jsonProblem(value)
  if (problem)
    throw new AppError('invalid_field', `${op}: the value for "${path.join('.')}" must be plain JSON (${problem})`, {
      field: path[0],
    })
}

function clone<T>(value: T): T {
  return value === undefined ? value : (structuredClone(value) as T)
}

/**
 * Applies one operator at a path inside a field's current value and returns the field's new value:
 * `$set` puts a value (creating objects on the way), `$push` appends to an array (a missing one is
 * created), `$pull` removes every equal element, `$unset` removes a key. Throws invalid_request when the
 * path runs through something that is not an object, or `$push`/`$pull` meet a non-array.
 */
export function applyOperator(
  current: unknown,
  rest: readonly string[],
  op: JsonOperator,
  value: unknown,
  where: string,
): unknown {
  if (rest.length === 0) return applyAtTarget(current, op, value, where)
  const container: Record<string, unknown> =
    current === null || current === undefined ? {} : isObject(current) ? { ...current } : notAnObject(where)
  const [key, ...deeper] = rest as [string, ...string[]]
  const child = applyOperator(container[key], deeper, op, value, where)
  if (child === undefined) delete container[key]
  else container[key] = child
  return container
}

function applyAtTarget(target: unknown, op: JsonOperator, value: unknown, where: string): unknown {
  switch (op) {
    case '$set':
      return clone(value)
    case '$unset':
      return undefined
    case '$push': {
      if (target !== null && target !== undefined && !Array.isArray(target))
        throw new AppError('invalid_request', `$push: ${where} is not an array`)
      return [...((target as unknown[] | null) ?? []), clone(value)]
    }
    case '$pull': {
      if (target === null || target === undefined) return target
      if (!Array.isArray(target)) throw new AppError('invalid_request', `$pull: ${where} is not an array`)
      return target.filter((item) => !isDeepStrictEqual(item, value))
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function notAnObject(where: string): never {
  throw new AppError('invalid_request', `${where}: the path runs through a value that is not an object`)
}
