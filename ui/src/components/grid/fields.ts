// What the grid knows of a collection's fields: their kinds, how a value is shown and how an edit is read.

export interface RelationConfig {
  targetCollection: string
  relationType: 'belongsTo' | 'hasMany'
  displayField?: string
}

export interface FieldInfo {
  name: string
  type: string
  label?: string
  required?: boolean
  enumValues?: string[]
  relationConfig?: RelationConfig
  translatable?: boolean
}

export type Row = Record<string, unknown> & { id: string; _version: number; deleted_at: number | null }

/** A column of the grid: a field of the collection or a system column. */
export interface Column {
  name: string
  label: string
  type: string
  system: boolean
  field?: FieldInfo
}

export const systemColumns: readonly Column[] = [
  { name: 'id', label: 'id', type: 'uuid', system: true },
  { name: 'created_at', label: 'created_at', type: 'datetime', system: true },
  { name: 'updated_at', label: 'updated_at', type: 'datetime', system: true },
  { name: '_version', label: '_version', type: 'integer', system: true },
]

const textTypes = new Set(['text', 'richtext', 'email', 'url', 'phone', 'slug', 'uuid', 'file'])
const numberTypes = new Set(['integer', 'number', 'decimal'])
const jsonTypes = new Set(['json', 'jsonb', 'geo', 'multi_enum'])

export const isNumeric = (type: string) => numberTypes.has(type)
export const isText = (type: string) => textTypes.has(type)

/** Columns of the collection's own fields, then the system columns. */
export function columnsOf(fields: readonly FieldInfo[]): Column[] {
  return [
    ...fields.map((f) => ({ name: f.name, label: f.label || f.name, type: f.type, system: false, field: f })),
    ...systemColumns,
  ]
}

/** Whether a cell of this column can be edited in place. */
export function editable(column: Column): boolean {
  return !column.system && column.type !== 'lookup' && column.type !== 'rollup' && !column.field?.translatable
}

/** Whether the list can sort by this column (JSON-valued and computed fields cannot). */
export function sortable(column: Column): boolean {
  return !jsonTypes.has(column.type) && column.type !== 'lookup' && column.type !== 'rollup' && !isHasMany(column)
}

export const isHasMany = (column: Column) => column.field?.relationConfig?.relationType === 'hasMany'
export const isRelation = (column: Column) => column.type === 'relation'

/** A related record's display value: its displayField, else a name-like field, else its id. */
export function displayOfRelated(value: unknown, config: RelationConfig | undefined): string {
  if (value === null || value === undefined) return ''
  if (typeof value !== 'object') return String(value)
  const record = value as Record<string, unknown>
  for (const key of [config?.displayField, 'name', 'title', 'label', 'email', 'id']) {
    if (key && record[key] !== undefined && record[key] !== null) return String(record[key])
  }
  return ''
}

const pad = (n: number) => String(n).padStart(2, '0')

/** Unix seconds as `YYYY-MM-DD HH:MM` (UTC). */
export function formatSeconds(seconds: number): string {
  const d = new Date(seconds * 1000)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`
}

/** Unix seconds as the value of a datetime-local input (UTC), and back. */
export const toLocalInput = (seconds: number) => formatSeconds(seconds).replace(' ', 'T')
export const fromLocalInput = (text: string) => Math.floor(Date.parse(`${text}Z`) / 1000)

/** A cell's text. */
export function display(column: Column, value: unknown): string {
  if (value === null || value === undefined) return ''
  if (isRelation(column)) {
    const config = column.field?.relationConfig
    if (Array.isArray(value)) return value.map((v) => displayOfRelated(v, config)).join(', ')
    return displayOfRelated(value, config)
  }
  if (column.type === 'datetime' && typeof value === 'number') return formatSeconds(value)
  if (column.type === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** The text an editor starts with for a value. */
export function editText(column: Column, value: unknown): string {
  if (value === null || value === undefined) return ''
  if (column.type === 'datetime' && typeof value === 'number') return toLocalInput(value)
  if (isRelation(column)) {
    if (Array.isArray(value))
      return value.map((v) => (v && typeof v === 'object' ? String((v as { id: unknown }).id) : String(v))).join(', ')
    if (typeof value === 'object') return String((value as { id: unknown }).id)
    return String(value)
  }
  if (column.type === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'object' || jsonTypes.has(column.type)) return JSON.stringify(value)
  return String(value)
}

/** Reads an editor's text as the field's value; throws an Error in words when it does not read. */
export function parseEdit(column: Column, text: string): unknown {
  const trimmed = text.trim()
  if (trimmed === '') return column.type === 'text' || column.type === 'richtext' ? (text === '' ? null : text) : null
  if (numberTypes.has(column.type)) {
    const n = Number(trimmed)
    if (!Number.isFinite(n)) throw new Error(`${column.label} takes a number`)
    return n
  }
  if (column.type === 'boolean') return trimmed === 'true'
  if (column.type === 'datetime') {
    const seconds = fromLocalInput(trimmed)
    if (!Number.isFinite(seconds)) throw new Error(`${column.label} takes a date and time`)
    return seconds
  }
  if (isRelation(column)) {
    if (isHasMany(column))
      return trimmed
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    return trimmed
  }
  if (jsonTypes.has(column.type)) {
    try {
      return JSON.parse(trimmed)
    } catch {
      throw new Error(`${column.label} takes JSON`)
    }
  }
  return text
}

/** A value in a filter: converted to what the field compares with (query-language.md). */
export function filterValue(column: Column | undefined, text: string): unknown {
  const type = column?.type ?? 'text'
  if (numberTypes.has(type)) return Number(text)
  if (type === 'boolean') return text === 'true'
  if (type === 'datetime' || type === 'created_at') {
    if (/^\d+$/.test(text)) return Number(text)
    return fromLocalInput(text)
  }
  return text
}

/** The relation fields a list expands (at most 10, as the API allows). */
export function expandable(columns: readonly Column[], visible: ReadonlySet<string>): string[] {
  return columns
    .filter((c) => isRelation(c) && visible.has(c.name))
    .map((c) => c.name)
    .slice(0, 10)
}
