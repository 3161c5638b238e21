import type { InputHTMLAttributes } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { client } from '../../api.js'
import { displayOfRelated, editText, isNumeric, type Column } from './fields.js'

/** The editor of one cell, by the field's type; Enter saves, Escape cancels, leaving the cell saves. */
export function CellEditor(props: {
  column: Column
  value: unknown
  rowLabel: string
  onCommit: (text: string) => void
  onCancel: () => void
}) {
  const { column } = props
  const [text, setText] = useState(() => editText(column, props.value))
  const done = useRef(false)
  const ref = useRef<HTMLInputElement & HTMLSelectElement>(null)
  useEffect(() => {
    ref.current?.focus()
    const el = ref.current as HTMLElement | null
    if (el instanceof HTMLInputElement && el.type === 'text') el.select()
  }, [])
  const finish = (commit: boolean, value = text) => {
    if (done.current) return
    done.current = true
    if (commit) props.onCommit(value)
    else props.onCancel()
  }
  const options = useRelatedOptions(column)
  const common = {
    ref,
    class: 'grid-editor',
    'aria-label': `${column.label} of ${props.rowLabel}`,
    onKeyDown: (e: KeyboardEvent) => {
      e.stopPropagation()
      if (e.key === 'Enter') {
        e.preventDefault()
        finish(true, (e.currentTarget as HTMLInputElement).value)
      } else if (e.key === 'Escape') {
        e.preventDefault()
        finish(false)
      }
    },
    onBlur: (e: FocusEvent) => finish(true, (e.currentTarget as HTMLInputElement).value),
  }
  if (column.type === 'boolean' || column.type === 'enum') {
    const options = column.type === 'boolean' ? ['true', 'false'] : (column.field?.enumValues ?? [])
    return (
      <select {...common} value={text} onChange={(e) => setText((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">(empty)</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    )
  }
  const type = isNumeric(column.type)
    ? 'number'
    : column.type === 'date'
      ? 'date'
      : column.type === 'datetime'
        ? 'datetime-local'
        : 'text'
  return (
    <>
      <input
        {...({
          ...common,
          list: options.length > 0 ? 'grid-related' : undefined,
          type,
          step: type === 'number' ? 'any' : undefined,
          value: text,
          onInput: (e: Event) => setText((e.currentTarget as HTMLInputElement).value),
        } as InputHTMLAttributes<HTMLInputElement>)}
      />
      {options.length > 0 ? (
        <datalist id="grid-related">
          {options.map((o) => (
            <option key={o.id} value={o.id} label={o.label} />
          ))}
        </datalist>
      ) : null}
    </>
  )
}

/** For a belongsTo relation: the target's first records (id and display value) to pick from. */
function useRelatedOptions(column: Column): { id: string; label: string }[] {
  const [options, setOptions] = useState<{ id: string; label: string }[]>([])
  const config = column.field?.relationConfig
  useEffect(() => {
    if (!config || config.relationType !== 'belongsTo' || config.targetCollection === 'users') return
    const controller = new AbortController()
    client
      .collection(config.targetCollection)
      .list({ limit: 100, signal: controller.signal })
      .then((page) => setOptions(page.data.map((r) => ({ id: r.id, label: displayOfRelated(r, config) }))))
      .catch(() => setOptions([]))
    return () => controller.abort()
  }, [config?.targetCollection])
  return options
}
