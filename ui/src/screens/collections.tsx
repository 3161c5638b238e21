import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from '../components/dialog.js'
import { blankField, concerns, FieldEditor } from '../components/field-editor.js'
import { SelectField } from '../components/field-editor-options.js'
import {
  cleanField,
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
import './collections.css'

/** The collections of the project: their storage and fields, links to records and schema, and a new one. */
export function Collections(_props: ScreenProps) {
  const list = useAsync(
    () => client.transport.request<{ data: CollectionDef[] }>('GET', '/api/v1/collections').then((r) => r.data),
    [],
  )
  const [creating, setCreating] = useState(false)
  const collections = list.value ?? []
  return (
    <Page
      title="Collections"
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          New collection
        </Button>
      }
    >
      <ProblemNote problem={list.problem} />
      {list.loading && !list.value ? <p role="status">Loading…</p> : null}
      {list.value && collections.length === 0 ? (
        <p class="empty">No collections yet. A collection is a table with a schema: make the first one.</p>
      ) : null}
      {collections.length > 0 ? (
        <div class="table-wrap">
          <table class="data collections-table">
            <caption class="visually-hidden">Collections of this project</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Storage</th>
                <th scope="col">Fields</th>
                <th scope="col">Access</th>
                <th scope="col">Schema</th>
              </tr>
            </thead>
            <tbody>
              {collections.map((c) => (
                <tr key={c.id}>
                  <td>
                    <Link to={`/collections/${encodeURIComponent(c.name)}`}>{c.name}</Link>
                  </td>
                  <td>
                    <span class="badge">{c.storageType}</span>
                  </td>
                  <td>{c.fields.length}</td>
                  <td>{c.accessControl?.preset ?? 'team'}</td>
                  <td>
                    <Link to={`/collections/${encodeURIComponent(c.name)}/schema`}>
                      Edit schema<span class="visually-hidden"> of {c.name}</span>
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {creating ? <NewCollection collections={collections} onClose={() => setCreating(false)} /> : null}
    </Page>
  )
}

const storageOptions = [
  { value: 'd1', label: 'd1: the project’s database (default)' },
  { value: 'kv', label: 'kv: a key-value table of JSON documents' },
  { value: 'durable_object', label: 'durable_object: a database of its own' },
  { value: 'r2_sql', label: 'r2_sql: an SQLite file in object storage (read-mostly)' },
  { value: 'remote', label: 'remote: a registered database binding' },
]

export const presetOptions = [
  { value: 'team', label: 'team: role grants alone decide' },
  { value: 'private', label: 'private: each person sees their own records' },
  { value: 'public', label: 'public: anyone may read, signed in or not' },
]

/** A refusal of the collection's name (the envelope may name no field for it). */
function nameRefused(problem: Problem | null): boolean {
  if (!problem) return false
  if (problem.field) return problem.field === 'name'
  return ['invalid_name', 'reserved_name', 'already_exists'].includes(problem.code)
}

interface Binding {
  id: string
  name: string
  kind: string
}

/** The "New collection" dialog: name, storage, access preset and the first fields. */
function NewCollection(props: { collections: readonly CollectionDef[]; onClose: () => void }) {
  const [name, setName] = useState('')
  const [storageType, setStorageType] = useState('d1')
  const [databaseId, setDatabaseId] = useState('')
  const [preset, setPreset] = useState<AccessPreset>('team')
  const [sharing, setSharing] = useState(false)
  const [fields, setFields] = useState<FieldDef[]>([])
  const [draft, setDraft] = useState<FieldDef>(blankField)
  const [editing, setEditing] = useState<number | null>(null)
  const [draftKey, setDraftKey] = useState(0)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const bindings = useAsync(
    () =>
      storageType === 'remote'
        ? client.transport.request<{ data: Binding[] }>('GET', '/api/v1/databases').then((r) => r.data)
        : Promise.resolve([] as Binding[]),
    [storageType],
  )

  const draftProblem = (): string | null => {
    if (!/^[a-z][a-z0-9_]{0,49}$/.test(draft.name))
      return 'Give the field a name: a lower-case letter, then letters, digits or _.'
    if (fields.some((f, i) => f.name === draft.name && i !== editing))
      return `There is already a field "${draft.name}".`
    return null
  }
  const [draftError, setDraftError] = useState<string | null>(null)
  const keepDraft = () => {
    const wrong = draftProblem()
    setDraftError(wrong)
    if (wrong) return
    setFields(editing === null ? [...fields, draft] : fields.map((f, i) => (i === editing ? draft : f)))
    setDraft(blankField())
    setEditing(null)
    setDraftKey((k) => k + 1)
  }

  const create = async (e: Event) => {
    e.preventDefault()
    // Enter inside the field being drafted adds that field; it does not create the collection yet.
    if (document.activeElement?.closest('.field-draft')) return keepDraft()
    setBusy(true)
    setProblem(null)
    try {
      const body = {
        name,
        storageType,
        ...(storageType === 'remote' ? { databaseId } : {}),
        accessControl: { preset, ...(sharing ? { sharing } : {}) },
        fields: fields.map(cleanField),
      }
      const made = await client.transport.request<{ data: CollectionDef }>('POST', '/api/v1/collections', { body })
      props.onClose()
      navigate(`/collections/${encodeURIComponent(made.data.name)}/schema`)
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Dialog title="New collection" onClose={props.onClose}>
      <form class="new-collection" onSubmit={create} noValidate>
        <TextField
          label="Name"
          hint="A lower-case letter, then letters, digits or _ (up to 50)."
          value={name}
          onValue={setName}
          error={nameRefused(problem) ? problem!.message : undefined}
          required
        />
        <SelectField label="Storage type" value={storageType} onValue={setStorageType} options={storageOptions} />
        {storageType === 'remote' ? (
          <SelectField
            label="Database binding"
            hint={bindings.value?.length === 0 ? 'No binding is registered in this project yet.' : undefined}
            value={databaseId}
            onValue={setDatabaseId}
            options={[{ value: '', label: 'Choose…' }].concat(
              (bindings.value ?? []).map((b) => ({ value: b.id, label: `${b.name} (${b.kind})` })),
            )}
          />
        ) : null}
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
        <h3>Fields</h3>
        {fields.length === 0 ? <p class="empty">No fields yet; add them below (or later, in the schema).</p> : null}
        {fields.length === 0 ? null : (
          <ul class="draft-fields">
            {fields.map((f, i) => (
              <li
                key={`${f.name}-${i}`}
                class={concerns(problem, f.name) ? 'draft-field field-invalid' : 'draft-field'}
              >
                <span>
                  <code>{f.name}</code> <span class="badge">{typeInfo(f.type).label}</span>
                  {f.required ? ' required' : ''}
                </span>
                {concerns(problem, f.name) ? <span class="field-error">{problem!.message}</span> : null}
                <span class="draft-actions">
                  <Button
                    aria-label={`Edit field ${f.name}`}
                    onClick={() => {
                      setEditing(i)
                      setDraft(f)
                      setDraftKey((k) => k + 1)
                    }}
                  >
                    Edit
                  </Button>
                  <Button
                    aria-label={`Remove field ${f.name}`}
                    onClick={() => setFields(fields.filter((_, j) => j !== i))}
                  >
                    Remove
                  </Button>
                </span>
              </li>
            ))}
          </ul>
        )}
        <fieldset class="card field-draft">
          <legend>{editing === null ? 'Add a field' : `Edit field ${fields[editing]?.name ?? ''}`}</legend>
          <FieldEditor
            key={draftKey}
            value={draft}
            onChange={setDraft}
            collections={props.collections}
            collection={name}
            siblings={fields.filter((_, i) => i !== editing)}
          />
          {draftError ? (
            <p class="field-error" role="alert">
              {draftError}
            </p>
          ) : null}
          <Button onClick={keepDraft}>{editing === null ? 'Add field' : 'Keep changes'}</Button>
        </fieldset>
        <ProblemNote problem={problem} />
        <div class="dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            Create collection
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
