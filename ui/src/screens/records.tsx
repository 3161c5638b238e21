import { ConflictError } from '@plinth/client'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { DeleteSelectedDialog } from '../components/grid-delete-dialog.js'
import { ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { ConflictDialog, type Conflict } from '../components/grid/conflict.js'
import { ExportButtons, ImportPanel } from '../components/grid/exchange.js'
import { NewRecordDialog } from '../components/grid/new-record.js'
import { ViewTabs } from '../components/grid/view-tabs.js'
import {
  columnsOf,
  editText,
  expandable,
  isRelation,
  parseEdit,
  type Column,
  type FieldInfo,
  type Row,
} from '../components/grid/fields.js'
import { FilterBuilder } from '../components/grid/filter-builder.js'
import { Grid, type Editing, type Sort } from '../components/grid/grid.js'
import { mergeKeepingExpansions, RowSource } from '../components/grid/row-source.js'
import { useLive } from '../components/grid/use-live.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import './records.css'

const liveLabels = { connecting: 'Connecting…', open: 'Live', reconnecting: 'Reconnecting…', closed: 'Not live' }

/** The view as the URL holds it: a link reproduces it. */
function viewOf(query: URLSearchParams) {
  const sortKey = query.get('sort') || '-created_at'
  return {
    filter: query.get('filter') || undefined,
    search: query.get('q') || undefined,
    sort: { field: sortKey.replace(/^-/, ''), desc: sortKey.startsWith('-') } as Sort,
    sortBy: sortKey,
    deleted: query.get('deleted') === '1',
    hidden: new Set((query.get('hide') ?? '').split(',').filter(Boolean)),
  }
}

export function Records(props: ScreenProps) {
  const name = props.params.name ?? ''
  const records = useMemo(() => client.collection<Record<string, unknown>>(name), [name])
  const definition = useAsync(
    () =>
      client.transport.request<{ data: { fields: FieldInfo[] } }>(
        'GET',
        `/api/v1/collections/${encodeURIComponent(name)}`,
      ),
    [name],
  )
  const view = viewOf(props.query)
  const allColumns = useMemo(() => columnsOf(definition.value?.data.fields ?? []), [definition.value])
  const columns = allColumns.filter((c) => !view.hidden.has(c.name))
  const visibleNames = new Set(columns.map((c) => c.name))
  const expand = expandable(allColumns, visibleNames)
  const relationFields = allColumns.filter(isRelation).map((c) => c.name)

  const setView = (change: Record<string, string | undefined>) => {
    const next = new URLSearchParams(props.query)
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined || value === '') next.delete(key)
      else next.set(key, value)
    }
    const text = next.toString()
    navigate(`/collections/${encodeURIComponent(name)}${text ? `?${text}` : ''}`, { replace: true })
  }

  // The rows: a new source whenever what the list asks for changes.
  const [, setTick] = useState(0)
  const source = useRef<RowSource | null>(null)
  const sourceFor = useRef('')
  const [generation, setGeneration] = useState(0)
  const sourceKey = JSON.stringify([name, view.filter, view.search, view.sortBy, view.deleted, expand, generation])
  useEffect(() => {
    if (!definition.value) return
    let frame = 0
    const rows = new RowSource(
      records,
      { filter: view.filter, search: view.search, sortBy: view.sortBy, includeDeleted: view.deleted, expand },
      () => {
        // Changes within one frame are drawn once.
        if (frame) return
        frame = requestAnimationFrame(() => {
          frame = 0
          setTick((t) => t + 1)
        })
      },
    )
    source.current = rows
    sourceFor.current = sourceKey
    setTick((t) => t + 1)
    void rows.start()
    return () => {
      cancelAnimationFrame(frame)
      rows.close()
    }
  }, [sourceKey, definition.value])
  const rows = source.current
  const reload = () => setGeneration((g) => g + 1)
  // Live once the list of this very view answered (a filter the list refuses is never streamed).
  const listed = sourceFor.current === sourceKey && (rows?.total ?? -1) >= 0
  const live = useLive(name, source, { ...view, relationFields }, reload, listed)

  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [editing, setEditing] = useState<Editing | null>(null)
  const [editBase, setEditBase] = useState<Row | null>(null)
  const [saving, setSaving] = useState<ReadonlySet<string>>(new Set())
  const [conflict, setConflict] = useState<Conflict | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [message, setMessage] = useState('')
  const [confirming, setConfirming] = useState(false)
  const [creating, setCreating] = useState(false)
  const [search, setSearch] = useState(view.search ?? '')
  useEffect(() => setSelected(new Set()), [sourceKey])
  // Another collection (the screen is reused): its own search text.
  useEffect(() => setSearch(view.search ?? ''), [name])

  // Typing in the search box narrows the list after a pause.
  useEffect(() => {
    if ((view.search ?? '') === search) return
    const timer = setTimeout(() => setView({ q: search.trim() || undefined }), 300)
    return () => clearTimeout(timer)
  }, [search])

  const withSaving = (id: string, on: boolean) =>
    setSaving((s) => {
      const next = new Set(s)
      if (on) next.add(id)
      else next.delete(id)
      return next
    })

  /** Writes one field at a version; a stale version opens the conflict dialog. */
  const save = async (index: number, column: Column, value: unknown, version: number) => {
    const row = rows?.rows[index]
    if (!rows || !row) return
    withSaving(row.id, true)
    try {
      let saved = (await records.update(row.id, { [column.name]: value }, { version })) as unknown as Row
      if (isRelation(column) && expand.includes(column.name))
        saved = (await records.get(row.id, { expand })) as unknown as Row
      const at = rows.indexOf(row.id)
      if (at >= 0) rows.replace(at, mergeKeepingExpansions(rows.rows[at]!, saved, relationFields))
      setMessage(`Saved ${column.label}.`)
    } catch (err) {
      if (err instanceof ConflictError && (err.code === 'precondition_failed' || err.code === 'conflict')) {
        const theirs = (await records.get(row.id, { expand })) as unknown as Row
        setConflict({ index: rows.indexOf(row.id), column, mine: value, theirs })
      } else setProblem(problemOf(err))
    } finally {
      withSaving(row.id, false)
    }
  }

  const commit = (index: number, column: Column, text: string) => {
    const base = editBase
    setEditBase(null)
    const row = rows?.rows[index]
    if (!row || !base) return
    let value: unknown
    try {
      value = parseEdit(column, text)
    } catch (err) {
      setProblem({ message: (err as Error).message, field: column.name, code: 'client', status: null })
      return
    }
    if (JSON.stringify(value) === JSON.stringify(parseEdit(column, editText(column, base[column.name])))) return
    setProblem(null)
    void save(index, column, value, base._version)
  }

  const restore = async (ids: readonly string[]) => {
    setProblem(null)
    try {
      for (const id of ids) await records.restore(id)
      setMessage(`Restored ${ids.length} record${ids.length === 1 ? '' : 's'}.`)
      for (const id of ids) {
        const at = rows?.indexOf(id) ?? -1
        if (rows && at >= 0) rows.replace(at, { ...rows.rows[at]!, deleted_at: null })
      }
    } catch (err) {
      setProblem(problemOf(err))
    }
  }

  const bulkDelete = async () => {
    const ids = [...selected]
    setConfirming(false)
    if (ids.length === 0) return
    setProblem(null)
    try {
      let deleted = 0
      for (let i = 0; i < ids.length; i += 200) deleted += (await records.bulk.delete(ids.slice(i, i + 200))).deleted
      for (const id of ids) rows?.applyDelete(id, Math.floor(Date.now() / 1000))
      setSelected(new Set())
      setMessage(`Deleted ${deleted} record${deleted === 1 ? '' : 's'}.`)
    } catch (err) {
      setProblem(problemOf(err))
    }
  }

  if (definition.problem)
    return (
      <Page title={name}>
        <ProblemNote problem={definition.problem} />
      </Page>
    )

  const total = rows?.total ?? -1
  const selectedDeleted = [...selected].filter((id) => {
    const at = rows?.indexOf(id) ?? -1
    return at >= 0 && rows!.rows[at]!.deleted_at !== null
  })
  return (
    <Page
      title={name}
      actions={
        <>
          <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
            New record
          </button>
          <Link to={`/collections/${encodeURIComponent(name)}/schema`} class="button">
            Schema
          </Link>
          <ExportButtons collection={name} />
        </>
      }
    >
      <ViewTabs collection={name} columnNames={allColumns.map((c) => c.name)} active={props.query.get('view')} />
      <div class="records-toolbar">
        <form
          role="search"
          class="records-search"
          onSubmit={(e) => {
            e.preventDefault()
            setView({ q: search.trim() || undefined })
          }}
        >
          <label for="records-search">Search</label>
          <input
            id="records-search"
            type="search"
            value={search}
            onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)}
          />
        </form>
        <details class="records-menu">
          <summary>Columns</summary>
          <fieldset>
            <legend>Shown columns</legend>
            {allColumns.map((c) => (
              <label key={c.name}>
                <input
                  type="checkbox"
                  checked={!view.hidden.has(c.name)}
                  onChange={(e) => {
                    const hidden = new Set(view.hidden)
                    if ((e.currentTarget as HTMLInputElement).checked) hidden.delete(c.name)
                    else hidden.add(c.name)
                    setView({ hide: [...hidden].join(',') })
                  }}
                />{' '}
                {c.label}
              </label>
            ))}
          </fieldset>
        </details>
        <label class="records-deleted">
          <input
            type="checkbox"
            checked={view.deleted}
            onChange={(e) => setView({ deleted: (e.currentTarget as HTMLInputElement).checked ? '1' : undefined })}
          />{' '}
          Show deleted records
        </label>
        <span class={`badge live-${live}`} role="status" aria-label={`Live updates: ${liveLabels[live]}`}>
          {liveLabels[live]}
        </span>
      </div>
      <details class="records-filter" open={view.filter !== undefined}>
        <summary>Filter{view.filter ? ' (active)' : ''}</summary>
        {definition.value ? (
          <FilterBuilder columns={allColumns} filter={view.filter} onApply={(filter) => setView({ filter })} />
        ) : null}
      </details>
      <div class="records-bulk inline">
        <p class="records-count" aria-live="polite">
          {total < 0 ? 'Loading…' : `${total.toLocaleString('en')} record${total === 1 ? '' : 's'}`}
          {selected.size > 0 ? `, ${selected.size} selected` : ''}
        </p>
        <button
          type="button"
          class="button button-danger"
          disabled={selected.size === 0}
          onClick={() => setConfirming(true)}
        >
          Delete selected
        </button>
        {view.deleted ? (
          <button
            type="button"
            class="button"
            disabled={selectedDeleted.length === 0}
            onClick={() => void restore(selectedDeleted).then(() => setSelected(new Set()))}
          >
            Restore selected
          </button>
        ) : null}
      </div>
      <ProblemNote problem={problem ?? (rows?.problem ? problemOf(rows.problem) : null)} />
      <p class="records-message" role="status">
        {message}
      </p>
      {definition.value && rows ? (
        <Grid
          label={`Records of ${name}`}
          columns={columns}
          widths={{ id: 300, _version: 90 }}
          total={Math.max(total, 0)}
          rows={rows.rows}
          sort={view.sort}
          onSort={(sort) =>
            setView({
              sort: sort.field === 'created_at' && sort.desc ? undefined : `${sort.desc ? '-' : ''}${sort.field}`,
            })
          }
          onRange={(from, to) => rows.ensure(from, to)}
          selected={selected}
          onSelect={(id, on) =>
            setSelected((s) => {
              const next = new Set(s)
              if (on) next.add(id)
              else next.delete(id)
              return next
            })
          }
          onSelectMany={(ids, on) =>
            setSelected((s) => {
              const next = new Set(s)
              for (const id of ids) {
                if (on) next.add(id)
                else next.delete(id)
              }
              return next
            })
          }
          editing={editing}
          onEdit={(next) => {
            setEditing(next)
            setEditBase(next ? (rows.rows[next.row] ?? null) : null)
          }}
          onCommit={commit}
          onRestore={(index) => {
            const row = rows.rows[index]
            if (row) void restore([row.id])
          }}
          saving={saving}
        />
      ) : (
        <p class="loading">Loading…</p>
      )}
      <details class="records-import">
        <summary>Import records</summary>
        <ImportPanel collection={name} onDone={() => setMessage('Import finished.')} />
      </details>
      {confirming ? (
        <DeleteSelectedDialog
          count={selected.size}
          onDelete={() => void bulkDelete()}
          onClose={() => setConfirming(false)}
        />
      ) : null}
      {creating ? (
        <NewRecordDialog
          collection={name}
          columns={allColumns}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false)
            setMessage('Record created.')
          }}
        />
      ) : null}
      {conflict ? (
        <ConflictDialog
          conflict={conflict}
          onClose={() => setConflict(null)}
          onKeepMine={() => {
            const c = conflict
            setConflict(null)
            void save(c.index, c.column, c.mine, c.theirs._version)
          }}
          onTakeTheirs={() => {
            const c = conflict
            setConflict(null)
            if (rows && c.index >= 0) rows.replace(c.index, c.theirs)
          }}
        />
      ) : null}
    </Page>
  )
}
