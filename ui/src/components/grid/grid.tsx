// A virtualised records grid (ARIA grid): a fixed row height, only the rows in view (and a few around them)
// rendered, each placed with a transform; a sticky header; the focus stays on the grid and the active cell
// is named by aria-activedescendant, so arrow keys move through rows that are not rendered yet.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { CellEditor } from './cell-editor.js'
import { display, editable, sortable, type Column, type Row } from './fields.js'

export const rowHeight = 36
const overscan = 8
const selectWidth = 44
const stateWidth = 110

export interface Sort {
  field: string
  desc: boolean
}

export interface Editing {
  row: number
  column: string
}

export interface GridProps {
  label: string
  columns: readonly Column[]
  widths: Readonly<Record<string, number>>
  total: number
  rows: readonly (Row | undefined)[]
  sort: Sort
  onSort: (sort: Sort) => void
  /** Told which rows are in view (with overscan) whenever that changes. */
  onRange: (from: number, to: number) => void
  selected: ReadonlySet<string>
  onSelect: (id: string, on: boolean) => void
  /** The header's box: selects (or clears) the rows in view. */
  onSelectMany: (ids: readonly string[], on: boolean) => void
  editing: Editing | null
  onEdit: (editing: Editing | null) => void
  onCommit: (row: number, column: Column, text: string) => void
  onRestore: (row: number) => void
  saving: ReadonlySet<string>
}

const cellId = (row: number, col: number) => `grid-cell-${row}-${col}`

export function Grid(props: GridProps) {
  const scroller = useRef<HTMLDivElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [height, setHeight] = useState(600)
  const [active, setActive] = useState({ row: 0, col: 1 })
  const { columns, total, rows } = props
  const colCount = columns.length + 2

  useLayoutEffect(() => {
    const el = scroller.current
    if (!el) return
    const observer = new ResizeObserver(() => setHeight(el.clientHeight))
    observer.observe(el)
    setHeight(el.clientHeight)
    return () => observer.disconnect()
  }, [])

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan)
  const last = Math.min(total - 1, Math.ceil((scrollTop + height) / rowHeight) + overscan)
  useEffect(() => props.onRange(first, last), [first, last, total])

  const widthOf = (c: Column) => props.widths[c.name] ?? 180
  const width = selectWidth + stateWidth + columns.reduce((sum, c) => sum + widthOf(c), 0)

  /** Keeps the active row in view when the keyboard moves it. */
  const reveal = (row: number) => {
    const el = scroller.current
    if (!el) return
    const top = row * rowHeight
    const bodyHeight = el.clientHeight - rowHeight
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + rowHeight > el.scrollTop + bodyHeight) el.scrollTop = top + rowHeight - bodyHeight
  }
  const move = (row: number, col: number) => {
    const next = { row: Math.max(0, Math.min(total - 1, row)), col: Math.max(0, Math.min(colCount - 1, col)) }
    setActive(next)
    reveal(next.row)
  }
  const page = Math.max(1, Math.floor(height / rowHeight) - 1)
  const onKeyDown = (e: KeyboardEvent) => {
    if (props.editing || total === 0) return
    const { row, col } = active
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(row + 1, col),
      ArrowUp: () => move(row - 1, col),
      ArrowRight: () => move(row, col + 1),
      ArrowLeft: () => move(row, col - 1),
      PageDown: () => move(row + page, col),
      PageUp: () => move(row - page, col),
      Home: () => (e.ctrlKey ? move(0, col) : move(row, 0)),
      End: () => (e.ctrlKey ? move(total - 1, col) : move(row, colCount - 1)),
      Enter: () => activate(row, col),
      ' ': () => {
        const record = rows[row]
        if (col === 0 && record) props.onSelect(record.id, !props.selected.has(record.id))
      },
    }
    const action = keys[e.key]
    if (!action) return
    e.preventDefault()
    action()
  }
  const activate = (row: number, col: number) => {
    const record = rows[row]
    if (!record) return
    if (col === 0) props.onSelect(record.id, !props.selected.has(record.id))
    else if (col === colCount - 1) {
      if (record.deleted_at !== null) props.onRestore(row)
    } else {
      const column = columns[col - 1]
      if (column && editable(column) && record.deleted_at === null) props.onEdit({ row, column: column.name })
    }
  }
  const stopEditing = () => {
    props.onEdit(null)
    scroller.current?.focus()
  }

  const inView = rows.slice(first, last + 1).filter((r): r is Row => r !== undefined)
  const allSelected = inView.length > 0 && inView.every((r) => props.selected.has(r.id))
  // Rows are recycled by slot: a row scrolled out lends its elements to the one scrolled in, so scrolling
  // patches text and attributes instead of making and dropping elements.
  const slots = Math.ceil(height / rowHeight) + 2 * overscan + 2
  const visible: preact.JSX.Element[] = []
  for (let i = first; i <= last; i++) {
    const record = rows[i]
    const deleted = record ? record.deleted_at !== null : false
    const rowLabel = `row ${i + 1}`
    visible.push(
      <div
        key={i % slots}
        role="row"
        aria-rowindex={i + 2}
        aria-selected={record ? props.selected.has(record.id) : undefined}
        class={`grid-row${i % 2 ? ' grid-row-alt' : ''}${deleted ? ' grid-row-deleted' : ''}`}
        style={{ transform: `translateY(${i * rowHeight}px)`, width: `${width}px` }}
        data-id={record?.id}
      >
        <div
          role="gridcell"
          id={cellId(i, 0)}
          class={cellClass(active, i, 0, 'grid-select')}
          style={{ width: `${selectWidth}px` }}
          onClick={() => setActive({ row: i, col: 0 })}
        >
          {record ? (
            <input
              type="checkbox"
              tabIndex={-1}
              aria-label={`Select ${rowLabel}`}
              checked={props.selected.has(record.id)}
              onClick={(e) => {
                // Toggled from the state, not the box: the cell's click re-renders before the change event.
                e.stopPropagation()
                setActive({ row: i, col: 0 })
                props.onSelect(record.id, !props.selected.has(record.id))
              }}
            />
          ) : null}
        </div>
        {columns.map((column, c) => {
          const isEditing = props.editing?.row === i && props.editing.column === column.name && record
          const value = record?.[column.name]
          return (
            <div
              key={column.name}
              role="gridcell"
              id={cellId(i, c + 1)}
              data-column={column.name}
              class={cellClass(active, i, c + 1, column.system ? 'grid-system' : '')}
              style={{ width: `${widthOf(column)}px` }}
              aria-readonly={!editable(column) || undefined}
              onClick={() => setActive({ row: i, col: c + 1 })}
              onDblClick={() => activate(i, c + 1)}
            >
              {isEditing ? (
                <CellEditor
                  column={column}
                  value={value}
                  rowLabel={rowLabel}
                  onCommit={(text) => {
                    props.onCommit(i, column, text)
                    stopEditing()
                  }}
                  onCancel={stopEditing}
                />
              ) : record ? (
                display(column, value)
              ) : (
                <span class="grid-loading">…</span>
              )}
            </div>
          )
        })}
        <div
          role="gridcell"
          id={cellId(i, colCount - 1)}
          class={cellClass(active, i, colCount - 1, 'grid-state')}
          style={{ width: `${stateWidth}px` }}
          onClick={() => setActive({ row: i, col: colCount - 1 })}
        >
          {record && props.saving.has(record.id) ? 'Saving…' : null}
          {deleted && record ? (
            <button
              type="button"
              class="button button-plain grid-restore"
              tabIndex={-1}
              aria-label={`Restore ${rowLabel}`}
              onClick={() => props.onRestore(i)}
            >
              Restore
            </button>
          ) : null}
        </div>
      </div>,
    )
  }

  return (
    <div
      ref={scroller}
      class="grid-scroll"
      role="grid"
      aria-label={props.label}
      aria-rowcount={Math.max(total, 0) + 1}
      aria-colcount={colCount}
      aria-multiselectable="true"
      tabIndex={0}
      aria-activedescendant={
        // Only a cell that is rendered: one scrolled out of the window has no element to point at.
        total > 0 && !props.editing && active.row >= first && active.row <= last
          ? cellId(active.row, active.col)
          : undefined
      }
      onKeyDown={onKeyDown}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
    >
      <div role="row" aria-rowindex={1} class="grid-header" style={{ width: `${width}px` }}>
        <div role="columnheader" class="grid-select" style={{ width: `${selectWidth}px` }}>
          <input
            type="checkbox"
            tabIndex={-1}
            aria-label="Select the rows in view"
            checked={allSelected}
            onClick={() =>
              props.onSelectMany(
                inView.map((r) => r.id),
                !allSelected,
              )
            }
          />
        </div>
        {columns.map((column) => {
          const sorted = props.sort.field === column.name
          return (
            <div
              key={column.name}
              role="columnheader"
              aria-sort={sorted ? (props.sort.desc ? 'descending' : 'ascending') : undefined}
              style={{ width: `${widthOf(column)}px` }}
            >
              {sortable(column) ? (
                <button
                  type="button"
                  class="grid-sort"
                  onClick={() => props.onSort({ field: column.name, desc: sorted ? !props.sort.desc : false })}
                >
                  {column.label}
                  <span aria-hidden="true">{sorted ? (props.sort.desc ? ' ▼' : ' ▲') : ''}</span>
                </button>
              ) : (
                <span class="grid-unsortable">{column.label}</span>
              )}
            </div>
          )
        })}
        <div role="columnheader" class="grid-state" style={{ width: `${stateWidth}px` }}>
          State
        </div>
      </div>
      <div
        role="rowgroup"
        class="grid-body"
        style={{ height: `${Math.max(total, 0) * rowHeight}px`, width: `${width}px` }}
      >
        {visible}
      </div>
    </div>
  )
}

function cellClass(active: { row: number; col: number }, row: number, col: number, extra: string): string {
  return `grid-cell${active.row === row && active.col === col ? ' grid-active' : ''}${extra ? ` ${extra}` : ''}`
}
