import { useEffect, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from '../components/dialog.js'
import { DropDialog, FieldDialog, RenameDialog } from '../components/field-editor-dialogs.js'
import { IndexesSection } from '../components/field-editor-indexes.js'
import { SelectField } from '../components/field-editor-options.js'
import {
  describeOptions,
  typeInfo,
  type AccessPreset,
  type CollectionDef,
  type FieldDef,
} from '../components/field-editor-types.js'
import { Button, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { presetOptions } from './collections.js'
import './collections.css'

const path = (name: string) => `/api/v1/collections/${encodeURIComponent(name)}`

type Open = { kind: 'add' } | { kind: 'edit' | 'rename' | 'drop'; field: FieldDef } | { kind: 'delete' } | null

/** The schema editor of one collection: fields, compound indexes, access preset; delete. */
export function CollectionSchema(props: ScreenProps) {
  const name = props.params.name ?? ''
  const loaded = useAsync(async () => {
    const [one, all] = await Promise.all([
      client.transport.request<{ data: CollectionDef }>('GET', path(name)),
      client.transport.request<{ data: CollectionDef[] }>('GET', '/api/v1/collections'),
    ])
    return { collection: one.data, collections: all.data }
  }, [name])
  const [collection, setCollection] = useState<CollectionDef | null>(null)
  useEffect(() => setCollection(loaded.value?.collection ?? null), [loaded.value])
  const [open, setOpen] = useState<Open>(null)
  const [saved, setSaved] = useState('')

  const c = collection
  const collections = (loaded.value?.collections ?? []).map((x) => (c && x.name === c.name ? c : x))
  const applied = (next: CollectionDef) => {
    setCollection(next)
    setOpen(null)
    setSaved(`Saved: schema version ${next.schemaVersion}.`)
  }
  const dialogProps = c ? { collection: c, collections, onApplied: applied, onClose: () => setOpen(null) } : null

  return (
    <Page
      title={`Schema: ${name}`}
      actions={
        <>
          <Link to={`/collections/${encodeURIComponent(name)}`} class="button">
            Records
          </Link>
          {c ? (
            <Button variant="danger" onClick={() => setOpen({ kind: 'delete' })}>
              Delete collection
            </Button>
          ) : null}
        </>
      }
    >
      <p>
        <Link to="/collections">All collections</Link>
      </p>
      <ProblemNote problem={loaded.problem} />
      {loaded.loading && !c ? <p role="status">Loading…</p> : null}
      <p class="saved-note" role="status">
        {saved}
      </p>
      {c && dialogProps ? (
        <>
          <dl class="collection-facts">
            <dt>Storage type</dt>
            <dd>
              <span class="badge">{c.storageType}</span> <span class="hint">(chosen at creation; cannot change)</span>
            </dd>
            <dt>Database</dt>
            <dd>
              <code>{c.databaseId}</code>
            </dd>
            <dt>Schema version</dt>
            <dd>{c.schemaVersion}</dd>
          </dl>
          <FieldsSection collection={c} onOpen={setOpen} />
          <IndexesSection collection={c} onApplied={applied} />
          <AccessSection collection={c} onApplied={applied} />
          {open?.kind === 'add' ? <FieldDialog {...dialogProps} /> : null}
          {open?.kind === 'edit' ? <FieldDialog key={open.field.name} {...dialogProps} field={open.field} /> : null}
          {open?.kind === 'rename' ? <RenameDialog {...dialogProps} field={open.field} /> : null}
          {open?.kind === 'drop' ? <DropDialog {...dialogProps} field={open.field} /> : null}
          {open?.kind === 'delete' ? <DeleteDialog name={c.name} onClose={() => setOpen(null)} /> : null}
        </>
      ) : null}
    </Page>
  )
}

function FieldsSection(props: { collection: CollectionDef; onOpen: (open: Open) => void }) {
  const c = props.collection
  return (
    <section class="card" aria-labelledby="fields-title">
      <div class="section-header">
        <h2 id="fields-title">Fields</h2>
        <Button variant="primary" onClick={() => props.onOpen({ kind: 'add' })}>
          Add field
        </Button>
      </div>
      {c.fields.length === 0 ? (
        <p class="empty">No fields yet: records hold only their system columns.</p>
      ) : (
        <div class="table-wrap">
          <table class="data schema-fields">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Flags</th>
                <th scope="col">Options</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {c.fields.map((f) => (
                <tr key={f.name}>
                  <th scope="row">
                    <code>{f.name}</code>
                    {f.label ? <span class="hint"> {f.label}</span> : null}
                  </th>
                  <td>{typeInfo(f.type).label}</td>
                  <td>
                    {[f.required && 'required', f.unique && 'unique', f.indexed && 'indexed']
                      .filter(Boolean)
                      .join(', ')}
                  </td>
                  <td class="field-options">{describeOptions(f)}</td>
                  <td class="row-actions">
                    <Button
                      aria-label={`Edit field ${f.name}`}
                      onClick={() => props.onOpen({ kind: 'edit', field: f })}
                    >
                      Edit
                    </Button>
                    <Button
                      aria-label={`Rename field ${f.name}`}
                      onClick={() => props.onOpen({ kind: 'rename', field: f })}
                    >
                      Rename
                    </Button>
                    <Button
                      variant="danger"
                      aria-label={`Drop field ${f.name}`}
                      onClick={() => props.onOpen({ kind: 'drop', field: f })}
                    >
                      Drop
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

/** The access preset (and sharing), saved with a PATCH of `accessControl` alone. */
function AccessSection(props: { collection: CollectionDef; onApplied: (c: CollectionDef) => void }) {
  const current = props.collection.accessControl
  const [preset, setPreset] = useState<AccessPreset>(current?.preset ?? 'team')
  const [sharing, setSharing] = useState(!!current?.sharing)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const save = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setProblem(null)
    try {
      const r = await client.transport.request<{ data: CollectionDef }>('PATCH', path(props.collection.name), {
        body: { accessControl: { preset, ...(sharing ? { sharing } : {}) } },
      })
      props.onApplied(r.data)
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <section class="card" aria-labelledby="access-title">
      <h2 id="access-title">Access</h2>
      <form onSubmit={save}>
        <SelectField
          label="Access preset"
          value={preset}
          onValue={(v) => setPreset(v as AccessPreset)}
          options={presetOptions}
        />
        <label class="check">
          <input
            type="checkbox"
            checked={sharing}
            onChange={(e) => setSharing((e.currentTarget as HTMLInputElement).checked)}
          />
          Owners may share records with people
        </label>
        <ProblemNote problem={problem} />
        <Button type="submit" disabled={busy}>
          Save access
        </Button>
      </form>
    </section>
  )
}

/** Deleting a collection drops its table and every record: the name is typed to confirm. */
function DeleteDialog(props: { name: string; onClose: () => void }) {
  const [typed, setTyped] = useState('')
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const remove = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setProblem(null)
    try {
      await client.transport.request('DELETE', path(props.name))
      props.onClose()
      navigate('/collections')
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Dialog title={`Delete collection ${props.name}`} onClose={props.onClose}>
      <form onSubmit={remove}>
        <p>
          This drops the table <code>{props.name}</code> with all its records. It cannot be undone.
        </p>
        <TextField label="Type the collection’s name to confirm" value={typed} onValue={setTyped} />
        <ProblemNote problem={problem} />
        <div class="dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="danger" disabled={busy || typed !== props.name}>
            Delete collection
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
