import type { InputHTMLAttributes } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { editText, isNumeric, type Column } from './fields.js'

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
    <input
      {...({
        ...common,
        type,
        step: type === 'number' ? 'any' : undefined,
        value: text,
        onInput: (e: Event) => setText((e.currentTarget as HTMLInputElement).value),
      } as InputHTMLAttributes<HTMLInputElement>)}
    />
  )
}
