import { createHash } from 'node:crypto'
import { structures, type FieldDef } from '../collections/index.js'

/**
 * The structure a field carries: a json field's declared one, or the implicit one of an enum column
 * (an enum at `$`) and a multi_enum column (a list of enum values, reported at `$` too, as its option
 * set is). Null for every other field.
 */
export interface FieldStructure {
  readonly def: FieldDef
  readonly kind: 'enum' | 'multi_enum' | 'json'
  readonly shape: structures.Shape
  /** The json field's enforcement; null for enum columns (their values are always checked on write). */
  readonly enforcement: structures.Enforcement | null
  /** Identifies the shape, labels and order aside: a scan or cursor of another fingerprint is out of date. */
  readonly fingerprint: string
}

const cache = new WeakMap<FieldDef, FieldStructure | null>()

/** The field's structure, or null when it has none; computed once per definition object. */
export function fieldStructure(def: FieldDef): FieldStructure | null {
  if (cache.has(def)) return cache.get(def)!
  const found = build(def)
  cache.set(def, found)
  return found
}

function build(def: FieldDef): FieldStructure | null {
  if (def.type === 'enum' || def.type === 'multi_enum') {
    const values: structures.EnumShape = { type: 'enum', values: (def.enumValues ?? []).map((value) => ({ value })) }
    const shape: structures.Shape = def.type === 'enum' ? values : { type: 'list', items: values }
    return { def, kind: def.type, shape, enforcement: null, fingerprint: fingerprintOf(shape) }
  }
  const structure = structures.structureOf(def)
  if (!structure) return null
  return {
    def,
    kind: 'json',
    shape: structure.shape,
    enforcement: structure.enforcement,
    fingerprint: fingerprintOf(structure.shape),
  }
}

/** The fingerprint of a shape: a hash of its label-free form with keys and enum values sorted. */
export function fingerprintOf(shape: structures.Shape): string {
  return createHash('sha256')
    .update(stable(structures.withoutLabels(shape)))
    .digest('hex')
    .slice(0, 24)
}

function stable(value: unknown): string {
  if (Array.isArray(value)) {
    const items = value.map(stable)
    return `[${items.sort().join(',')}]`
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * How a collapsed path is shown for this field: a multi_enum's items are at `$` (its option set's path),
 * everything else as it is. `internalPath` is the inverse, for fixes sent back.
 */
export function shownPath(fs: FieldStructure, path: string): string {
  return fs.kind === 'multi_enum' && path === '$[]' ? '$' : path
}

export function internalPath(fs: FieldStructure, path: string): string {
  return fs.kind === 'multi_enum' && path === '$' ? '$[]' : path
}
