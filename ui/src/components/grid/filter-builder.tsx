// The filter of the grid: conditions in rows (field, operator, value) that make the object format of
// docs/query-language.md, or the filter as text (either format: an object, or the array format).
import type { InputHTMLAttributes } from 'preact'
import { useState } from 'preact/hooks'
import { filterValue, isNumeric, isText, type Column } from './fields.js'

export interface Condition {
  field: string
  op: string
  value: string
}

const operators: readonly { op: string; label: string; takes: 'any' | 'order' | 'text' | 'none' | 'list' }[] = [
  { op: '_eq', label: 'equals', takes: 'any' },
  { op: '_neq', label: 'does not equal', takes: 'any' },
  { op: '_gt', label: 'greater than', takes: 'order' },
  { op: '_gte', label: 'at least', takes: 'order' },
  { op: '_lt', label: 'less than', takes: 'order' },
  { op: '_lte', label: 'at most', takes: 'order' },
  { op: '_contains', label: 'contains', takes: 'text' },
  { op: '_ncontains', label: 'does not contain', takes: 'text' },
  { op: '_starts_with', label: 'starts with', takes: 'text' },
  { op: '_ends_with', label: 'ends with', takes: 'text' },
  { op: '_in', label: 'is one of (comma-separated)', takes: 'list' },
  { op: '_nin', label: 'is none of (comma-separated)', takes: 'list' },
  { op: '_null', label: 'is empty', takes: 'none' },
  { op: '_nnull', label: 'is not empty', takes: 'none' },
]

function operatorsFor(column: Column | undefined) {
  const type = column?.type ?? 'text'
  return operators.filter((o) => {
    if (o.takes === 'text') return isText(type) || type === 'date' || type === 'enum'
    if (o.takes === 'order') return isNumeric(type) || isText(type) || type === 'date' || type === 'datetime'
    return true
  })
}

/** Conditions as the object format: one key per condition, `_and` when a field comes twice. */
export function toObjectFilter(conditions: readonly Condition[], columns: readonly Column[]): string | undefined {
  const parts = conditions
    .filter((c) => c.field)
    .map((c) => {
      const column = columns.find((col) => col.name === c.field)
      const takes = operators.find((o) => o.op === c.op)?.takes
      const value =
        takes === 'none'
          ? true
          : takes === 'list'
            ? c.value
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
                .map((s) => filterValue(column, s))
            : filterValue(column, c.value)
      return { [c.field]: { [c.op]: value } }
    })
  if (parts.length === 0) return undefined
  return JSON.stringify(parts.length === 1 ? parts[0] : { _and: parts })
}

/** The conditions a filter in the object format holds, when the builder can show it; null otherwise. */
export function fromObjectFilter(text: string): Condition[] | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null
  const list = (parsed as { _and?: unknown })._and
  const parts = Array.isArray(list) && Object.keys(parsed).length === 1 ? list : [parsed]
  const out: Condition[] = []
  for (const part of parts) {
    if (!part || typeof part !== 'object' || Array.isArray(part)) return null
    for (const [field, condition] of Object.entries(part)) {
      if (field.startsWith('_') && field !== '_version') return null
      if (!condition || typeof condition !== 'object' || Array.isArray(condition)) return null
      for (const [op, value] of Object.entries(condition)) {
        if (!operators.some((o) => o.op === op)) return null
        out.push({
          field,
          op,
          value: Array.isArray(value) ? value.join(', ') : value === true && op.endsWith('null') ? '' : String(value),
        })
      }
    }
  }
  return out
}

export function FilterBuilder(props: {
  columns: readonly Column[]
  filter: string | undefined
  onApply: (filter: string | undefined) => void
}) {
  const initial = props.filter ? fromObjectFilter(props.filter) : []
  const [mode, setMode] = useState<'builder' | 'text'>(initial === null ? 'text' : 'builder')
  const [conditions, setConditions] = useState<Condition[]>(initial ?? [])
  const [text, setText] = useState(props.filter ?? '')
  const [error, setError] = useState<string | null>(null)

  const setCondition = (i: number, change: Partial<Condition>) =>
    setConditions(conditions.map((c, j) => (j === i ? { ...c, ...change } : c)))
  const apply = () => {
    setError(null)
    if (mode === 'builder') {
      const filter = toObjectFilter(conditions, props.columns)
      setText(filter ?? '')
      props.onApply(filter)
      return
    }
    const trimmed = text.trim()
    if (trimmed === '') return props.onApply(undefined)
    try {
      JSON.parse(trimmed)
    } catch {
      setError(
        'The filter is not JSON: write an object ({"field": {"_eq": "value"}}) or an array ([{"field": "…", "op": "eq", "value": "…"}]).',
      )
      return
    }
    props.onApply(trimmed)
  }
  const switchTo = (next: 'builder' | 'text') => {
    setError(null)
    if (next === 'text') setText(toObjectFilter(conditions, props.columns) ?? text)
    else {
      const parsed = text.trim() ? fromObjectFilter(text) : []
      if (parsed === null) {
        setError('The builder cannot show this filter (the array format, _or, or a path): keep editing it as text.')
        return
      }
      setConditions(parsed)
    }
    setMode(next)
  }

  return (
    <form
      class="filter-builder"
      aria-label="Filter"
      onSubmit={(e) => {
        e.preventDefault()
        apply()
      }}
    >
      <fieldset class="filter-mode">
        <legend>Filter as</legend>
        <label>
          <input type="radio" name="filter-mode" checked={mode === 'builder'} onChange={() => switchTo('builder')} />{' '}
          conditions
        </label>
        <label>
          <input type="radio" name="filter-mode" checked={mode === 'text'} onChange={() => switchTo('text')} /> text
        </label>
      </fieldset>
      {mode === 'builder' ? (
        <div class="filter-rows">
          {conditions.length === 0 ? <p class="hint">No condition: every record.</p> : null}
          {conditions.map((c, i) => {
            const column = props.columns.find((col) => col.name === c.field)
            const ops = operatorsFor(column)
            const takes = operators.find((o) => o.op === c.op)?.takes
            const n = i + 1
            return (
              <div class="filter-row" key={i}>
                <select
                  aria-label={`Field of condition ${n}`}
                  value={c.field}
                  onChange={(e) => setCondition(i, { field: (e.currentTarget as HTMLSelectElement).value })}
                >
                  {props.columns.map((col) => (
                    <option key={col.name} value={col.name}>
                      {col.label}
                    </option>
                  ))}
                </select>
                <select
                  aria-label={`Operator of condition ${n}`}
                  value={c.op}
                  onChange={(e) => setCondition(i, { op: (e.currentTarget as HTMLSelectElement).value })}
                >
                  {ops.map((o) => (
                    <option key={o.op} value={o.op}>
                      {o.label}
                    </option>
                  ))}
                </select>
                {takes === 'none' ? null : column?.type === 'boolean' && takes === 'any' ? (
                  <select
                    aria-label={`Value of condition ${n}`}
                    value={c.value}
                    onChange={(e) => setCondition(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                  >
                    <option value="true">true</option>
                    <option value="false">false</option>
                  </select>
                ) : column?.type === 'enum' && takes === 'any' ? (
                  <select
                    aria-label={`Value of condition ${n}`}
                    value={c.value}
                    onChange={(e) => setCondition(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                  >
                    {(column.field?.enumValues ?? []).map((v) => (
                      <option key={v} value={v}>
                        {v}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...({
                      'aria-label': `Value of condition ${n}`,
                      type: inputType(takes, column),
                      step: 'any',
                      value: c.value,
                      onInput: (e: Event) => setCondition(i, { value: (e.currentTarget as HTMLInputElement).value }),
                    } as InputHTMLAttributes<HTMLInputElement>)}
                  />
                )}
                <button
                  type="button"
                  class="button button-plain"
                  aria-label={`Remove condition ${n}`}
                  onClick={() => setConditions(conditions.filter((_, j) => j !== i))}
                >
                  ×
                </button>
              </div>
            )
          })}
          <button
            type="button"
            class="button"
            onClick={() => {
              const column = props.columns[0]
              const value = column?.type === 'boolean' ? 'true' : (column?.field?.enumValues?.[0] ?? '')
              setConditions([...conditions, { field: column?.name ?? '', op: '_eq', value }])
            }}
          >
            Add a condition
          </button>
        </div>
      ) : (
        <div class="field">
          <label for="filter-text">Filter (JSON: the object or the array format)</label>
          <textarea
            id="filter-text"
            rows={3}
            value={text}
            spellcheck={false}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </div>
      )}
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="inline">
        <button type="submit" class="button button-primary">
          Apply the filter
        </button>
        {props.filter ? (
          <button
            type="button"
            class="button"
            onClick={() => {
              setConditions([])
              setText('')
              props.onApply(undefined)
            }}
          >
            Clear
          </button>
        ) : null}
      </div>
    </form>
  )
}

function inputType(takes: string | undefined, column: Column | undefined): string {
  if (takes === 'list') return 'text'
  const type = column?.type ?? ''
  if (isNumeric(type)) return 'number'
  if (type === 'date' || type === 'datetime') return type === 'date' ? 'date' : 'datetime-local'
  return 'text'
}
