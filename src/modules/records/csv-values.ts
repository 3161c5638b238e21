import { AppError } from '../../lib/errors.js'
import { fieldTypeOf, type FieldDef } from '../collections/index.js'

// What a CSV cell means for the field it goes to (the CSV import of records, csv-import.ts). A cell is
// text; each field type reads it as the export writes it (export.ts, csvCell), so an export imports back.

/** The export's formula guard: a `'` it put before =, +, -, @, tab or CR (OWASP "CSV injection"). */
const formulaGuarded = /^'[=+\-@\t\r]/
/** A decimal number as people and the export write it: no hex, no Infinity, no empty text. */
const decimalNumber = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/
const wholeNumber = /^\d+$/
/** An ISO 8601 moment with its zone; without one the moment would depend on the server's time zone. */
const isoMoment = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)$/
const truthy = new Set(['true', '1', 'yes'])
const falsy = new Set(['false', '0', 'no'])

/** Undoes the export's formula guard: `'=SUM(A1)` → `=SUM(A1)`; any other cell as it is. */
export function unguard(cell: string): string {
  return formulaGuarded.test(cell) ? cell.slice(1) : cell
}

/**
 * A cell for its field, after `unguard`. Empty is null. Text that does not read as the field's kind is
 * passed on as text, so the field's own check refuses it naming the field; JSON-looking text that is not
 * JSON is refused here (a json field would otherwise take it as a string). Throws invalid_field.
 */
export function cellValue(def: FieldDef, cell: string): unknown {
  if (cell === '') return null
  const type = fieldTypeOf(def.type)
  if (def.translatable) return localeMap(cell) ?? cell
  if (type.type === 'multi_enum' || (type.type === 'relation' && type.valueKind(def) === 'json'))
    return listOf(def, cell)
  if (type.type === 'relation' || type.type === 'file') return cell.trim()
  if (type.type === 'datetime') return momentOf(cell.trim()) ?? cell
  switch (type.valueKind(def)) {
    case 'integer':
    case 'number': {
      const text = cell.trim()
      return decimalNumber.test(text) ? Number(text) : cell
    }
    case 'boolean': {
      const text = cell.trim().toLowerCase()
      return truthy.has(text) ? true : falsy.has(text) ? false : cell
    }
    case 'json':
      return jsonOf(def, cell)
    default:
      return cell
  }
}

/** A system column's cell: `id` as text, `created_at`/`updated_at` as Unix seconds; empty is absent. */
export function systemValue(column: string, cell: string): unknown {
  const text = cell.trim()
  if (text === '') return undefined
  return column === 'id' ? text : (momentOf(text) ?? text)
}

/** Unix seconds from a whole number or an ISO 8601 moment with its zone; null for anything else. */
function momentOf(text: string): number | null {
  if (wholeNumber.test(text)) return Number(text)
  const ms = isoMoment.test(text) ? Date.parse(text) : Number.NaN
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null
}

/** A translatable field's locale map, when the cell is one as JSON text (`{"en":"Hi"}`); else null. */
function localeMap(cell: string): Record<string, unknown> | null {
  const text = cell.trim()
  if (!text.startsWith('{')) return null
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

/** JSON text; a cell that is not JSON is a JSON string, unless it looks like an object, array or string. */
function jsonOf(def: FieldDef, cell: string): unknown {
  const text = cell.trim()
  try {
    return JSON.parse(text) as unknown
  } catch {
    if (/^[[{"]/.test(text)) throw notJson(def)
    return cell
  }
}

/** A list (multi_enum, hasMany relation): JSON array text as the export writes it, or comma-separated values. */
function listOf(def: FieldDef, cell: string): unknown {
  const text = cell.trim()
  if (text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown
    } catch {
      throw notJson(def)
    }
  }
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

function notJson(def: FieldDef): AppError {
  return new AppError('invalid_field', `Field "${def.name}": the cell starts like JSON but is not valid JSON`, {
    field: def.name,
  })
}
