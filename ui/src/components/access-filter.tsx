import { useId } from 'preact/hooks'
import { Button } from './form.js'

// The item_filter editor of a grant: conditions as rows (field, operator, value), written in the object
// format of the query language (docs/query-language.md), with the variables a grant may use
// (docs/permissions.md). A filter the rows cannot show (nested _or inside _and, a JSON value) is edited as
// JSON instead.

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
const noValue = (op: Operator) => op === '_null' || op === '_nnull'
const listValue = (op: Operator) => op === '_in' || op === '_nin'

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

/** The editor. `fields` are the names offered for the field inputs (the grant's collection's, when known). */
export function ItemFilterEditor(props: {
  draft: FilterDraft
  onDraft: (draft: FilterDraft) => void
  fields: readonly string[]
  error?: string | undefined
}) {
  const id = useId()
  const { draft, onDraft } = props
  const setRow = (index: number, change: Partial<Condition>) => {
    if (draft.mode !== 'rows') return
    onDraft({ ...draft, rows: draft.rows.map((r, i) => (i === index ? { ...r, ...change } : r)) })
  }
  return (
    <fieldset class="access-filter" aria-describedby={props.error ? `${id}-error` : `${id}-hint`}>
      <legend>Rows this grant reaches (item filter)</legend>
      <p class="hint" id={`${id}-hint`}>
        No condition: every row. Variables such as <code>$CURRENT_USER</code> are resolved for whoever makes the
        request.
      </p>
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
      <datalist id={`${id}-fields`}>
        {props.fields.map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
      {draft.mode === 'json' ? (
        <div class="field">
          <label for={`${id}-json`}>Filter as JSON (object format)</label>
          {draft.note ? <p class="hint">{draft.note}</p> : null}
          <textarea
            id={`${id}-json`}
            spellcheck={false}
            value={draft.text}
            onInput={(e) => onDraft({ mode: 'json', text: (e.currentTarget as HTMLTextAreaElement).value })}
          />
          <div class="inline">
            <Button
              onClick={() => {
                const built = filterOf(draft)
                if (!built.ok) return onDraft({ ...draft, note: built.message })
                const back = draftOf(built.filter)
                onDraft(
                  back.mode === 'rows'
                    ? back
                    : { ...draft, note: 'This filter cannot be shown as rows; keep editing it as JSON.' },
                )
              }}
            >
              Edit as rows
            </Button>
          </div>
        </div>
      ) : (
        <>
          {draft.rows.length > 1 ? (
            <div class="field">
              <label for={`${id}-match`}>A row is reached when it matches</label>
              <select
                id={`${id}-match`}
                value={draft.match}
                onChange={(e) =>
                  onDraft({ ...draft, match: (e.currentTarget as HTMLSelectElement).value as 'all' | 'any' })
                }
              >
                <option value="all">all the conditions</option>
                <option value="any">any of the conditions</option>
              </select>
            </div>
          ) : null}
          <ol class="access-conditions">
            {draft.rows.map((row, i) => (
              <li key={i} class="access-condition">
                <fieldset>
                  <legend>Condition {i + 1}</legend>
                  <div class="access-condition-inputs">
                    <div class="field">
                      <label for={`${id}-f${i}`}>Field</label>
                      <input
                        id={`${id}-f${i}`}
                        list={`${id}-fields`}
                        value={row.field}
                        autoComplete="off"
                        onInput={(e) => setRow(i, { field: (e.currentTarget as HTMLInputElement).value })}
                      />
                    </div>
                    <div class="field">
                      <label for={`${id}-o${i}`}>Operator</label>
                      <select
                        id={`${id}-o${i}`}
                        value={row.op}
                        onChange={(e) => setRow(i, { op: (e.currentTarget as HTMLSelectElement).value as Operator })}
                      >
                        {operators.map((o) => (
                          <option key={o.op} value={o.op}>
                            {o.label}
                          </option>
                        ))}
                      </select>
                    </div>
                    {noValue(row.op) ? null : (
                      <>
                        <div class="field">
                          <label for={`${id}-k${i}`}>Value is</label>
                          <select
                            id={`${id}-k${i}`}
                            value={row.kind}
                            onChange={(e) => {
                              const kind = (e.currentTarget as HTMLSelectElement).value as ValueKind
                              setRow(i, {
                                kind,
                                value:
                                  kind === 'variable'
                                    ? variables[0].name
                                    : kind === 'boolean'
                                      ? 'true'
                                      : row.kind === 'variable' || row.kind === 'boolean'
                                        ? ''
                                        : row.value,
                              })
                            }}
                          >
                            <option value="text">text</option>
                            <option value="number">a number</option>
                            <option value="boolean">true or false</option>
                            {listValue(row.op) ? null : <option value="variable">a variable</option>}
                          </select>
                        </div>
                        <div class="field">
                          <label for={`${id}-v${i}`}>{listValue(row.op) ? 'Values (comma-separated)' : 'Value'}</label>
                          {row.kind === 'variable' ? (
                            <select
                              id={`${id}-v${i}`}
                              value={row.value}
                              onChange={(e) => setRow(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                            >
                              {variables.map((v) => (
                                <option key={v.name} value={v.name}>
                                  {v.name} — {v.label}
                                </option>
                              ))}
                            </select>
                          ) : row.kind === 'boolean' && !listValue(row.op) ? (
                            <select
                              id={`${id}-v${i}`}
                              value={row.value}
                              onChange={(e) => setRow(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                            >
                              <option value="true">true</option>
                              <option value="false">false</option>
                            </select>
                          ) : (
                            <input
                              id={`${id}-v${i}`}
                              value={row.value}
                              inputMode={row.kind === 'number' ? 'decimal' : undefined}
                              onInput={(e) => setRow(i, { value: (e.currentTarget as HTMLInputElement).value })}
                            />
                          )}
                        </div>
                      </>
                    )}
                    <Button
                      class="access-remove-condition"
                      aria-label={`Remove condition ${i + 1}`}
                      onClick={() => onDraft({ ...draft, rows: draft.rows.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </Button>
                  </div>
                </fieldset>
              </li>
            ))}
          </ol>
          <div class="inline">
            <Button
              onClick={() =>
                onDraft({
                  ...draft,
                  rows: [...draft.rows, { field: '', op: '_eq', kind: 'text', value: '' }],
                })
              }
            >
              Add a condition
            </Button>
            <Button
              onClick={() => {
                const built = filterOf(draft)
                if (built.ok)
                  return onDraft({
                    mode: 'json',
                    text: built.filter === undefined ? '' : JSON.stringify(built.filter, null, 2),
                  })
                // Keep what was typed: values that do not fit their kind go over as text.
                const asText = filterOf({ ...draft, rows: draft.rows.map((r) => ({ ...r, kind: 'text' })) })
                onDraft({
                  mode: 'json',
                  text: asText.ok && asText.filter !== undefined ? JSON.stringify(asText.filter, null, 2) : '',
                  note: built.message,
                })
              }}
            >
              Edit as JSON
            </Button>
          </div>
        </>
      )}
    </fieldset>
  )
}
