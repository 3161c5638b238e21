import { AppError } from '../../../lib/errors.js'
import type { FieldDef } from '../field-types/index.js'

export interface FieldsDiff {
  /** New fields, in the order of the new list. */
  added: FieldDef[]
  /** Existing fields whose `indexed` flips, as they are in the new list. */
  indexToggled: FieldDef[]
}

/**
 * What a PATCH (the complete, normalised field list) changes. Only additions, `indexed` toggles and a json
 * field's `structure` (addendum §4; no DDL, checked by the structure hooks) are supported (core-api
 * "Update rules"); order does not matter. Throws AppError invalid_field (400) naming
 * the first existing field that is missing (removed or renamed) or otherwise changed.
 */
export function diffFields(existing: readonly FieldDef[], next: readonly FieldDef[]): FieldsDiff {
  const nextByName = new Map(next.map((f, index) => [f.name, { def: f, index }]))
  const indexToggled: FieldDef[] = []
  existing.forEach((old, index) => {
    const found = nextByName.get(old.name)
    if (!found) {
      throw new AppError('invalid_field', `Field "${old.name}" is missing: removing or renaming a field is not supported`, { field: old.name, index })
    }
    const changed = changedProperties(old, found.def)
    if (changed.length > 0) {
      throw new AppError(
        'invalid_field',
        `Field "${old.name}": changing ${changed.join(', ')} of an existing field is not supported; only adding fields and toggling indexed are`,
        { field: old.name, index: found.index, changed },
      )
    }
    if (old.indexed !== found.def.indexed) indexToggled.push(found.def)
  })
  const existingNames = new Set(existing.map((f) => f.name))
  return { added: next.filter((f) => !existingNames.has(f.name)), indexToggled }
}

// Compared in canonical form: absent, undefined and (for flags) false are the same; `indexed` and
// `structure` may change.
function changedProperties(a: FieldDef, b: FieldDef): string[] {
  const left = canonicalDef(a)
  const right = canonicalDef(b)
  const keys = new Set([...Object.keys(left), ...Object.keys(right)])
  return [...keys].filter((key) => stableJson(left[key]) !== stableJson(right[key])).sort()
}

function canonicalDef(def: FieldDef): Record<string, unknown> {
  const { indexed: _indexed, structure: _structure, ...rest } = def
  return { ...rest, required: def.required === true, unique: def.unique === true, translatable: def.translatable === true }
}

function stableJson(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}
