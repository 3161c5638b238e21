import { JsonTooDeep, JsonTooLarge, maxJsonNesting, parseJsonBounded } from '../../../lib/json-bounds.js'
import { jsonErrorOffset } from './json-position.js'

/** A brick body read: a JSON object, or why not, with the line within the body where known (0-based). */
export type BodyRead =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; code: 'brick.invalid_json' | 'brick.invalid_body'; message: string; lineInBody: number }

/**
 * Parses a brick body: JSON, at most maxJsonNesting deep and a million values (a deeper body is a
 * diagnostic, never a stack overflow), no `__proto__` key (as every request body), and an object (the
 * wire shape of one API call).
 */
export function readBrickBody(text: string): BodyRead {
  if (text.trim() === '') {
    return {
      ok: false,
      code: 'brick.invalid_json',
      message: "the body is empty: a brick's body is a JSON object",
      lineInBody: 0,
    }
  }
  let value: unknown
  try {
    value = parseJsonBounded(text)
  } catch (err) {
    if (err instanceof JsonTooDeep) {
      const message = `the body nests deeper than ${maxJsonNesting} levels`
      return { ok: false, code: 'brick.invalid_json', message, lineInBody: 0 }
    }
    if (err instanceof JsonTooLarge)
      return { ok: false, code: 'brick.invalid_json', message: err.message, lineInBody: 0 }
    // JSON.parse's own message quotes the text and differs between Node versions: say it here instead.
    const at = Math.max(0, jsonErrorOffset(text))
    const lineInBody = countLines(text, at)
    const found = at >= text.length ? 'the end of the body' : JSON.stringify(text.slice(at, at + 1))
    const column = at - (text.lastIndexOf('\n', at - 1) + 1) + 1
    const message = `the body is not JSON: unexpected ${found} at line ${lineInBody + 1}, column ${column} of the body`
    return { ok: false, code: 'brick.invalid_json', message, lineInBody }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, code: 'brick.invalid_body', message: "a brick's body is a JSON object", lineInBody: 0 }
  }
  if (holdsProtoKey(value)) {
    return { ok: false, code: 'brick.invalid_json', message: 'the body must not hold a "__proto__" key', lineInBody: 0 }
  }
  return { ok: true, value: value as Record<string, unknown> }
}

function countLines(text: string, upTo: number): number {
  let lines = 0
  for (let i = text.indexOf('\n'); i >= 0 && i < upTo; i = text.indexOf('\n', i + 1)) lines++
  return lines
}

function holdsProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (item === null || typeof item !== 'object') continue
    if (Array.isArray(item)) {
      for (const element of item) stack.push(element)
      continue
    }
    for (const key of Object.keys(item)) {
      if (key === '__proto__') return true
      stack.push((item as Record<string, unknown>)[key])
    }
  }
  return false
}
