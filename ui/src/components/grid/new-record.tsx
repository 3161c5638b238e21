import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../../api.js'
import { Dialog } from '../dialog.js'
import { Field, ProblemNote } from '../form.js'
import { useAsync } from '../use-async.js'
import { editable, isNumeric, parseEdit, type Column } from './fields.js'

/**
 * A new record: one input per writable field, typed like the grid's cell editors; the server's refusal is
 * shown at the field it names. The grid's live stream brings the record into the list.
 */
export function NewRecordDialog(props: {
  collection: string
  columns: readonly Column[]
  onClose: () => void
  onCreated: (id: string) => void
}) {
  const fields = props.columns.filter((c) => editable(c) && c.field?.relationConfig?.relationType !== 'hasMany')
  const [texts, setTexts] = useState<Record<string, string>>({})
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)

  async function submit(event: Event) {
    event.preventDefault()
    setProblem(null)
    const body: Record<string, unknown> = {}
    for (const column of fields) {
      const text = texts[column.name] ?? ''
      if (text === '') continue
      try {
        body[column.name] = parseEdit(column, text)
      } catch (err) {
        setProblem({ message: (err as Error).message, field: column.name, code: 'client', status: null })
        return
      }
    }
    setBusy(true)
    try {
      const created = await client.collection(props.collection).create(body)
      props.onCreated(String((created as { id: unknown }).id))
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  const set = (name: string, value: string) => setTexts((t) => ({ ...t, [name]: value }))
  return (
    <Dialog title={`New record in ${props.collection}`} onClose={props.onClose}>
      <form onSubmit={submit}>
        <ProblemNote problem={problem} />
        {fields.map((column) => {
          const error = problem?.field === column.name ? problem.message : undefined
          const label = `${column.label}${column.field?.required ? ' (required)' : ''}`
          return (
            <Field key={column.name} label={label} error={error}>
              {(id, describedBy) =>
                column.field?.relationConfig ? (
                  <RelationSelect
                    id={id}
                    describedBy={describedBy}
                    target={column.field.relationConfig.targetCollection}
                    display={column.field.relationConfig.displayField}
                    value={texts[column.name] ?? ''}
                    onValue={(v) => set(column.name, v)}
                  />
                ) : column.type === 'boolean' || column.type === 'enum' ? (
                  <select
                    id={id}
                    aria-describedby={describedBy}
                    value={texts[column.name] ?? ''}
                    onChange={(e) => set(column.name, (e.currentTarget as HTMLSelectElement).value)}
                  >
                    <option value="">(empty)</option>
                    {(column.type === 'boolean' ? ['true', 'false'] : (column.field?.enumValues ?? [])).map((o) => (
                      <option key={o} value={o}>
                        {o}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    id={id}
                    aria-describedby={describedBy}
                    aria-invalid={error ? true : undefined}
                    inputMode={isNumeric(column.type) ? 'decimal' : undefined}
                    value={texts[column.name] ?? ''}
                    onInput={(e) => set(column.name, (e.currentTarget as HTMLInputElement).value)}
                  />
                )
              }
            </Field>
          )
        })}
        <div class="inline">
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create the record'}
          </button>
          <button type="button" class="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  )
}

/** A belongsTo relation's value picked by name: the first 100 users or target records. */
function RelationSelect(props: {
  id: string
  describedBy: string | undefined
  target: string
  display: string | undefined
  value: string
  onValue: (value: string) => void
}) {
  const options = useAsync(async () => {
    if (props.target === 'users') {
      const users = await client.transport.request<{ data: { id: string; name: string; email: string | null }[] }>(
        'GET',
        '/api/v1/users',
        { query: { limit: 100 } },
      )
      return users.data.map((u) => ({ id: u.id, label: u.name || u.email || u.id }))
    }
    const page = await client.collection(props.target).list({ limit: 100 })
    return page.data.map((r) => ({
      id: String(r.id),
      label: props.display && r[props.display] != null ? String(r[props.display]) : String(r.id),
    }))
  }, [props.target])
  return (
    <select
      id={props.id}
      aria-describedby={props.describedBy}
      value={props.value}
      onChange={(e) => props.onValue((e.currentTarget as HTMLSelectElement).value)}
    >
      <option value="">(none)</option>
      {(options.value ?? []).map((o) => (
        <option key={o.id} value={o.id}>
          {o.label}
        </option>
      ))}
    </select>
  )
}
