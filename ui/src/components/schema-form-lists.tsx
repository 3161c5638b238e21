import { useEffect, useRef, useState } from 'preact/hooks'
import { Group } from './schema-form-inputs.js'
import { isRecord, kindOf, shown, toNumberish, type Labelled } from './schema-form-schema.js'

/** A list of values: one input each, add and remove. */
export function ListField(props: Labelled) {
  const items = Array.isArray(props.value) ? (props.value as unknown[]) : []
  const itemSchema = props.schema.items ?? {}
  const numbers = kindOf(itemSchema, 0) === 'number'
  const set = (next: unknown[]) => props.onChange(next.length === 0 && !props.required ? undefined : next)
  return (
    <Group legend={props.label} hint={props.hint} error={props.error} class="schema-list">
      {items.map((item, i) => {
        const itemError = props.ctx.errors[`${props.path}[${i}]`]
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: items have no identity but their place
          <div class="schema-list-item" key={i}>
            <input
              aria-label={`${props.name} ${i + 1}`}
              type="text"
              list={props.ctx.suggestions}
              autoComplete="off"
              aria-invalid={itemError ? true : undefined}
              value={shown(item)}
              onInput={(e) => {
                const text = (e.currentTarget as HTMLInputElement).value
                const next = [...items]
                next[i] = numbers ? (toNumberish(text) ?? '') : text
                set(next)
              }}
            />
            <button
              type="button"
              class="button button-plain"
              aria-label={`Remove ${props.name} ${i + 1}`}
              onClick={() => set(items.filter((_, j) => j !== i))}
            >
              Remove
            </button>
            {itemError ? <p class="field-error">{itemError}</p> : null}
          </div>
        )
      })}
      <button
        type="button"
        class="button button-plain"
        disabled={props.schema.maxItems !== undefined && items.length >= props.schema.maxItems}
        onClick={() => set([...items, ''])}
      >
        Add to {props.name}
      </button>
    </Group>
  )
}

/** An object of names to values (http_request's headers): a name and a value per row, add and remove. */
export function MapField(props: Labelled) {
  const entries = isRecord(props.value) ? Object.entries(props.value) : []
  // Rows keep their place while a name is being typed (an object cannot hold two empty names).
  const [rows, setRows] = useState<[string, string][]>(() => entries.map(([k, v]) => [k, shown(v)]))
  const last = useRef(props.value)
  useEffect(() => {
    if (JSON.stringify(props.value) !== JSON.stringify(last.current)) {
      last.current = props.value
      setRows(isRecord(props.value) ? Object.entries(props.value).map(([k, v]) => [k, shown(v)]) : [])
    }
  }, [props.value])
  const set = (next: [string, string][]) => {
    setRows(next)
    const named = next.filter(([k]) => k !== '')
    const value = named.length === 0 && !props.required ? undefined : Object.fromEntries(named)
    last.current = value
    props.onChange(value)
  }
  return (
    <Group legend={props.label} hint={props.hint} error={props.error} class="schema-list">
      {rows.map(([name, value], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
        <div class="schema-list-item" key={i}>
          <input
            type="text"
            aria-label={`${props.name} ${i + 1} name`}
            placeholder="name"
            autoComplete="off"
            value={name}
            onInput={(e) =>
              set(rows.map((r, j) => (j === i ? [(e.currentTarget as HTMLInputElement).value, r[1]] : r)))
            }
          />
          <input
            type="text"
            aria-label={`${props.name} ${i + 1} value`}
            placeholder="value"
            list={props.ctx.suggestions}
            autoComplete="off"
            value={value}
            onInput={(e) =>
              set(rows.map((r, j) => (j === i ? [r[0], (e.currentTarget as HTMLInputElement).value] : r)))
            }
          />
          <button
            type="button"
            class="button button-plain"
            aria-label={`Remove ${props.name} ${i + 1}`}
            onClick={() => set(rows.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="button button-plain" onClick={() => setRows([...rows, ['', '']])}>
        Add to {props.name}
      </button>
    </Group>
  )
}
