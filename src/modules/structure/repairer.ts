import { AppError } from '../../lib/errors.js'
import { structures } from '../collections/index.js'
import { internalPath, type FieldStructure } from './field-structure.js'

/** What a client sends: a group's code, path and from, and its suggestion (or another allowed value) as `to`. */
export interface Fix {
  readonly kind: 'enum' | 'unknown-key' | 'key'
  readonly path: string
  readonly from: string
  readonly to: string
}

/** A fix checked against the shape, with the path as the walk spells it. */
interface CheckedFix extends Fix {
  readonly at: string
}

export const fixKinds = ['enum', 'unknown-key', 'key'] as const
export const repairLimits = { fixes: 50 } as const

const locationsCache = new WeakMap<FieldStructure, Map<string, structures.ShapeLocation>>()
function locationsOf(fs: FieldStructure): Map<string, structures.ShapeLocation> {
  let found = locationsCache.get(fs)
  if (!found) {
    found = new Map(structures.shapeLocations(fs.shape).map((l) => [l.path, l]))
    locationsCache.set(fs, found)
  }
  return found
}

function refuse(index: number, reason: string): never {
  throw new AppError('VALIDATION_ERROR', `fixes[${index}]: ${reason}`, { index, reason })
}

/**
 * Checks the fixes of a repair request against the field's structure: 1 to 50 of them, each repairable
 * (kind enum, unknown-key or key; `from` wrong there and `to` allowed there), no two for the same wrong
 * value. Throws VALIDATION_ERROR (422) naming the first bad fix.
 */
export function checkFixes(fs: FieldStructure, input: unknown): CheckedFix[] {
  if (!Array.isArray(input) || input.length === 0)
    throw new AppError('VALIDATION_ERROR', 'fixes must list at least one fix', { reason: 'no fixes' })
  if (input.length > repairLimits.fixes) {
    throw new AppError('VALIDATION_ERROR', `A repair job takes at most ${repairLimits.fixes} fixes`, {
      reason: 'too many fixes',
      limit: repairLimits.fixes,
    })
  }
  const seen = new Set<string>()
  return input.map((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      refuse(index, 'a fix is an object { kind, path, from, to }')
    const { kind, path, from, to } = raw as Record<string, unknown>
    if (kind === 'type') refuse(index, 'a type mismatch cannot be repaired in bulk')
    if (typeof kind !== 'string' || !(fixKinds as readonly string[]).includes(kind))
      refuse(index, `kind must be one of ${fixKinds.join(', ')}`)
    if (typeof path !== 'string' || path.length === 0 || path.length > 2000)
      refuse(index, 'path must be a group’s path')
    if (typeof from !== 'string' || typeof to !== 'string') refuse(index, 'from and to must be strings')
    if (from === to) refuse(index, 'from and to are the same')
    const at = kind === 'enum' ? internalPath(fs, path) : path
    const location = locationsOf(fs).get(at)
    if (!location) refuse(index, `no location ${JSON.stringify(path.slice(0, 100))} in the field's structure`)
    const keysLocation = location.segments.at(-1)?.kind === 'keys'
    const shape = location.shape
    if (kind === 'enum' || kind === 'key') {
      if (shape.type !== 'enum' || keysLocation !== (kind === 'key')) {
        refuse(index, kind === 'enum' ? `${path} does not hold enum values` : `${path} is not the keys of a map`)
      }
      const allowed = structures.allowedValues(shape)
      if (allowed.has(from))
        refuse(index, `${JSON.stringify(from.slice(0, 60))} is allowed at ${path}; there is nothing to repair`)
      if (!allowed.has(to)) refuse(index, `${JSON.stringify(to.slice(0, 60))} is not allowed at ${path}`)
    } else {
      if (shape.type !== 'object' || shape.additional)
        refuse(index, `${path} is not an object with declared entries only`)
      if (structures.ownEntry(shape, from) !== undefined)
        refuse(index, `${JSON.stringify(from.slice(0, 60))} is a declared key at ${path}`)
      if (structures.ownEntry(shape, to) === undefined)
        refuse(index, `${JSON.stringify(to.slice(0, 60))} is not a declared key at ${path}`)
    }
    const identity = JSON.stringify([kind, at, from])
    if (seen.has(identity)) refuse(index, 'another fix already repairs this value here')
    seen.add(identity)
    return { kind: kind as Fix['kind'], path, from, to, at }
  })
}

export interface FixOutcome {
  /** The repaired value (the input itself when nothing applied). */
  readonly value: unknown
  /** How many places a fix changed. */
  readonly applied: number
  /** Why the row cannot be repaired (a rename onto a key that exists), or null. */
  readonly refusal: string | null
}

class Refused extends Error {}

/**
 * Applies the fixes to one value, recomputed from what it holds now: an enum value equal to `from` becomes
 * `to`; a key `from` is renamed `to` in place (keeping the key order), refused when `to` exists already.
 * Nothing is removed. The input is not modified.
 */
export function applyFixes(value: unknown, fs: FieldStructure, fixes: readonly CheckedFix[]): FixOutcome {
  const byPath = new Map<string, CheckedFix[]>()
  for (const fix of fixes) {
    const at = fix.kind === 'key' ? fix.at.slice(0, -'{key}'.length) : fix.at
    byPath.set(at, [...(byPath.get(at) ?? []), fix])
  }
  let applied = 0
  const fix = (current: unknown, shape: structures.Shape, segments: structures.Segment[]): unknown => {
    if (current === null || current === undefined) return current
    const here = byPath.get(structures.renderPath(segments, true)) ?? []
    switch (shape.type) {
      case 'enum': {
        const hit = here.find((f) => f.kind === 'enum' && f.from === current)
        if (!hit) return current
        applied++
        return hit.to
      }
      case 'object': {
        if (typeof current !== 'object' || Array.isArray(current)) return current
        const renamed = rename(
          current as Record<string, unknown>,
          here.filter((f) => f.kind === 'unknown-key'),
          segments,
        )
        let changed = renamed !== current
        const out = Object.entries(renamed).map(([key, item]): [string, unknown] => {
          const entry = structures.ownEntry(shape, key)
          if (entry === undefined) return [key, item]
          const next = fix(item, entry, [...segments, { kind: 'entry', key }])
          if (next !== item) changed = true
          return [key, next]
        })
        return changed ? Object.fromEntries(out) : current
      }
      case 'list': {
        if (!Array.isArray(current)) return current
        let changed = false
        const out = current.map((item, index) => {
          const next = fix(item, shape.items, [...segments, { kind: 'item', index }])
          if (next !== item) changed = true
          return next
        })
        return changed ? out : current
      }
      case 'map': {
        if (typeof current !== 'object' || Array.isArray(current)) return current
        const renamed = rename(
          current as Record<string, unknown>,
          here.filter((f) => f.kind === 'key'),
          segments,
        )
        let changed = renamed !== current
        const out = Object.entries(renamed).map(([key, item]): [string, unknown] => {
          const next = fix(item, shape.values, [...segments, { kind: 'value', key }])
          if (next !== item) changed = true
          return [key, next]
        })
        return changed ? Object.fromEntries(out) : current
      }
      default:
        return current
    }
  }
  const rename = (
    object: Record<string, unknown>,
    renames: readonly CheckedFix[],
    segments: structures.Segment[],
  ): Record<string, unknown> => {
    const hits = renames.filter((r) => Object.hasOwn(object, r.from))
    if (hits.length === 0) return object
    for (const r of hits) {
      if (Object.hasOwn(object, r.to)) {
        throw new Refused(
          `key ${JSON.stringify(r.to.slice(0, 60))} already exists at ${structures.renderPath(segments, false)}; "${r.from.slice(0, 60)}" was not renamed onto it`,
        )
      }
    }
    const targets = new Set(hits.map((r) => r.to))
    if (targets.size < hits.length)
      throw new Refused(`two keys at ${structures.renderPath(segments, false)} would be renamed to the same key`)
    applied += hits.length
    const to = new Map(hits.map((r) => [r.from, r.to]))
    return Object.fromEntries(Object.entries(object).map(([key, item]) => [to.get(key) ?? key, item]))
  }
  try {
    const next = fix(value, fs.shape, [])
    return { value: next, applied, refusal: null }
  } catch (err) {
    if (err instanceof Refused) return { value, applied: 0, refusal: err.message }
    throw err
  }
}

export type { CheckedFix }
