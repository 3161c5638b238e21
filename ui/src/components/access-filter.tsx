// The item_filter of a grant, as its editor (access-filter-editor.tsx) shows it: conditions as rows (field,
// operator, value), written in the object format of the query language (docs/query-language.md), with the
// variables a grant may use (docs/permissions.md). A filter the rows cannot show (nested _or inside _and, a
// JSON value) is edited as JSON instead.

export const operators = [
  { op: '_eq', label: 'equals' },
  { op: '_neq', label: 'does not equal' },
  { op: '_gt', label: 'greater than' },
  { op: '_gte', label: 'at least' },
  { op: '_lt', label: 'less than' },
  { op: '_lte', label: 'at most' },
  { op: '_in', label: 'is one of' },
  { op: '_nin', label: 'is none of' },
  { op: '_contains', label: 'contains' },
  { op: '_ncontains', label: 'does not contain' },
  { op: '_starts_with', label: 'starts with' },
  { op: '_nstarts_with', label: 'does not start with' },
  { op: '_ends_with', label: 'ends with' },
  { op: '_nends_with', label: 'does not end with' },
  { op: '_null', label: 'is empty' },
  { op: '_nnull', label: 'is not empty' },
] as const

export type Operator = (typeof operators)[number]['op']

/** The dynamic variables a grant's filter may use, resolved for the caller on every request. */
export const variables = [
  { name: '$CURRENT_USER', label: 'the signed-in user (id)' },
  { name: '$CURRENT_ROLE', label: "the caller's role (name)" },
  { name: '$PROJECT_ID', label: 'the project (id)' },
  { name: '$NOW', label: 'now (Unix seconds)' },
  { name: '$NOW_DATE', label: 'today (YYYY-MM-DD)' },
] as const

export type ValueKind = 'text' | 'number' | 'boolean' | 'variable'

export interface Condition {
  field: string
  op: Operator
  kind: ValueKind
  value: string
}

export type FilterDraft =
  | { mode: 'rows'; match: 'all' | 'any'; rows: Condition[] }
  | { mode: 'json'; text: string; note?: string }

const operatorSet = new Set<string>(operators.map((o) => o.op))
const variableSet = new Set<string>(variables.map((v) => v.name))
export const noValue = (op: Operator) => op === '_null' || op === '_nnull'
export const listValue = (op: Operator) => op === '_in' || op === '_nin'

/** A condition from one stored operator and value; null when the rows cannot show it. */
function conditionOf(field: string, op: string, value: unknown): Condition | null {
  if (!operatorSet.has(op)) return null
  const o = op as Operator
  if (noValue(o)) return value === true ? { field, op: o, kind: 'text', value: '' } : null
  if (listValue(o)) {
    if (!Array.isArray(value) || value.length === 0) return null
    const kinds = new Set(value.map((v) => typeof v))
    if (kinds.size !== 1) return null
    const kind = typeof value[0]
    if (kind === 'number') return { field, op: o, kind: 'number', value: value.join(', ') }
    if (kind === 'boolean') return { field, op: o, kind: 'boolean', value: value.join(', ') }
    if (kind === 'string' && !value.some((v: string) => v.includes(',')))
      return { field, op: o, kind: 'text', value: value.join(', ') }
    return null
  }
  if (typeof value === 'string')
    return variableSet.has(value) ? { field, op: o, kind: 'variable', value } : { field, op: o, kind: 'text', value }
  if (typeof value === 'number') return { field, op: o, kind: 'number', value: String(value) }
  if (typeof value === 'boolean') return { field, op: o, kind: 'boolean', value: String(value) }
  return null
}

/** The conditions of a flat filter ({ field: value | { _op: value } }); null when it is not flat. */
function flatConditions(filter: unknown): Condition[] | null {
  if (!filter || typeof filter !== 'object' || Array.isArray(filter)) return null
  const rows: Condition[] = []
  for (const [field, value] of Object.entries(filter)) {
    if (field.startsWith('_')) return null
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const entries = Object.entries(value)
      if (entries.length === 0 || !entries.every(([k]) => k.startsWith('_'))) return null
      for (const [op, v] of entries) {
        const row = conditionOf(field, op, v)
        if (!row) return null
        rows.push(row)
      }
    } else {
      const row = conditionOf(field, '_eq', value)
      if (!row) return null
      rows.push(row)
    }
  }
  return rows
}

/** The editor's starting state for a stored filter (absent: no conditions). */
export function draftOf(filter: unknown): FilterDraft {
  if (filter === undefined || filter === null) return { mode: 'rows', match: 'all', rows: [] }
  if (filter && typeof filter === 'object' && !Array.isArray(filter)) {
    const keys = Object.keys(filter)
    if (keys.length === 1 && (keys[0] === '_or' || keys[0] === '_and')) {
      const parts = (filter as Record<string, unknown>)[keys[0]]
      if (Array.isArray(parts)) {
        const rows = parts.map(flatConditions)
        if (rows.every((r): r is Condition[] => r !== null && r.length === 1))
          return { mode: 'rows', match: keys[0] === '_or' ? 'any' : 'all', rows: rows.flat() }
      }
    } else {
      const rows = flatConditions(filter)
      if (rows) return { mode: 'rows', match: 'all', rows }
    }
  }
  return { mode: 'json', text: JSON.stringify(filter, null, 2) }
}

type Built = { ok: true; filter: unknown } | { ok: false; message: string }

function valueOf(row: Condition, index: number): { ok: true; value: unknown } | { ok: false; message: string } {
  if (noValue(row.op)) return { ok: true, value: true }
  const one = (text: string): { ok: true; value: unknown } | { ok: false; message: string } => {
    const t = text.trim()
    if (row.kind === 'text') return { ok: true, value: text }
    if (row.kind === 'variable') return { ok: true, value: t }
    if (row.kind === 'number') {
      const n = Number(t)
      return t !== '' && Number.isFinite(n)
        ? { ok: true, value: n }
        : { ok: false, message: `Condition ${index + 1}: "${text}" is not a number.` }
    }
    if (t === 'true' || t === 'false') return { ok: true, value: t === 'true' }
    return { ok: false, message: `Condition ${index + 1}: choose true or false.` }
  }
  if (listValue(row.op)) {
    const items = row.value.split(',').map((s) => (row.kind === 'text' ? s.trim() : s))
    if (items.length === 0 || items.every((s) => s.trim() === ''))
      return { ok: false, message: `Condition ${index + 1}: list at least one value, separated by commas.` }
    const values: unknown[] = []
    for (const item of items) {
      const v = one(item)
      if (!v.ok) return v
      values.push(v.value)
    }
    return { ok: true, value: values }
  }
  return one(row.value)
}

/** The filter a draft stands for: undefined for no conditions (every row), or why it cannot be saved. */
export function filterOf(draft: FilterDraft): Built {
  if (draft.mode === 'json') {
    if (draft.text.trim() === '') return { ok: true, filter: undefined }
    try {
      return { ok: true, filter: JSON.parse(draft.text) as unknown }
    } catch {
      return { ok: false, message: 'The filter is not valid JSON.' }
    }
  }
  const parts: Record<string, unknown>[] = []
  for (const [i, row] of draft.rows.entries()) {
    if (row.field.trim() === '') return { ok: false, message: `Condition ${i + 1}: name a field.` }
    const v = valueOf(row, i)
    if (!v.ok) return v
    parts.push({ [row.field.trim()]: { [row.op]: v.value } })
  }
  if (parts.length === 0) return { ok: true, filter: undefined }
  if (parts.length === 1) return { ok: true, filter: parts[0] }
  if (draft.match === 'any') return { ok: true, filter: { _or: parts } }
  // All of them: one object when no field and operator repeats, else _and.
  const merged: Record<string, Record<string, unknown>> = {}
  for (const part of parts) {
    const [field, ops] = Object.entries(part)[0]! as [string, Record<string, unknown>]
    const [op, value] = Object.entries(ops)[0]!
    const into = (merged[field] ??= {})
    if (op in into) return { ok: true, filter: { _and: parts } }
    into[op] = value
  }
  return { ok: true, filter: merged }
}

/** Says a filter in words (for the list of grants and the summary). */
export function describeFilter(filter: unknown): string {
  if (filter === undefined || filter === null) return 'every row'
  const draft = draftOf(filter)
  if (draft.mode === 'json') return JSON.stringify(filter)
  const said = draft.rows.map((row) => {
    const label = operators.find((o) => o.op === row.op)!.label
    if (noValue(row.op)) return `${row.field} ${label}`
    const value =
      row.kind === 'variable'
        ? (variables.find((v) => v.name === row.value)?.label ?? row.value)
        : row.kind === 'text' && !listValue(row.op)
          ? `"${row.value}"`
          : row.value
    return `${row.field} ${label} ${value}`
  })
  return `rows where ${said.join(draft.match === 'any' ? ' or ' : ' and ')}`
}
