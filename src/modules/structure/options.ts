import { structures, type FieldDef } from '../collections/index.js'
import { fieldStructure } from './field-structure.js'

/** The allowed values at one location of a field (core-api "Option set"). */
export interface OptionSet {
  path: string
  label: string
  multiple: boolean
  values: { value: string; label: string }[]
}

/** How labels are chosen: the request's locale, then the project's default locale, then the value itself. */
export interface LabelLocale {
  readonly locale: string
  readonly fallback: string
}

function fieldLabel(def: FieldDef): string {
  return def.label ?? def.name
}

/**
 * The option sets of a field: an enum column at `$`, a multi_enum column at `$` (multiple), and every enum
 * inside a json field's structure at its path (list items `tags[]` and map keys `scores{key}` are
 * multiple). Empty for a field without any.
 */
export function optionSetsOf(def: FieldDef, locale: LabelLocale): OptionSet[] {
  const fs = fieldStructure(def)
  if (!fs) return []
  const values = (shape: structures.EnumShape) =>
    shape.values.map((v) => ({
      value: v.value,
      label: structures.labelIn(v.label, locale.locale, locale.fallback) ?? v.value,
    }))
  if (fs.kind !== 'json') {
    const shape = (fs.shape.type === 'list' ? fs.shape.items : fs.shape) as structures.EnumShape
    return [{ path: '$', label: fieldLabel(def), multiple: fs.kind === 'multi_enum', values: values(shape) }]
  }
  return structures
    .shapeLocations(fs.shape)
    .filter((l): l is structures.ShapeLocation & { shape: structures.EnumShape } => l.shape.type === 'enum')
    .map((l) => ({
      path: l.path,
      label: labelOf(l, locale) ?? l.entryKey ?? fieldLabel(def),
      multiple: l.multiple,
      values: values(l.shape),
    }))
}

// The enum's own label, else the label of the list or map holding it.
function labelOf(location: structures.ShapeLocation, locale: LabelLocale): string | null {
  const own = structures.labelIn(location.shape.label, locale.locale, locale.fallback)
  if (own !== null) return own
  const parent = location.parent
  if (parent && (parent.type === 'list' || parent.type === 'map'))
    return structures.labelIn(parent.label, locale.locale, locale.fallback)
  return null
}
