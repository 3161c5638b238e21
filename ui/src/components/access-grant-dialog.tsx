import { useId, useState } from 'preact/hooks'
import type { Problem } from '../api.js'
import { actions, fieldError, refusalOf, systemResources, type CollectionInfo, type GrantRow } from './access-common.js'
import { draftOf, filterOf, type FilterDraft } from './access-filter.js'
import { ItemFilterEditor } from './access-filter-editor.js'
import { Dialog } from './dialog.js'
import { Button, Field, ProblemNote } from './form.js'

const systemColumns = ['id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'owned_by']

/** The collection a resource names (`collections/posts`), if it names exactly one. */
function collectionOf(resource: string, collections: readonly CollectionInfo[]): CollectionInfo | undefined {
  const m = /^collections\/([^*/]+)$/.exec(resource)
  return m ? collections.find((c) => c.name === m[1]) : undefined
}

export function GrantDialog(props: {
  grant: GrantRow | undefined
  index: number
  collections: readonly CollectionInfo[]
  onClose: () => void
  onSave: (grant: GrantRow) => Promise<void>
}) {
  const g = props.grant
  const [resource, setResource] = useState(g?.resource ?? 'collections/*')
  const [action, setAction] = useState(g?.action ?? 'read')
  const [draft, setDraft] = useState<FilterDraft>(draftOf(g?.item_filter))
  const [limitFields, setLimitFields] = useState(Boolean(g?.fields && g.fields.length > 0))
  const [fields, setFields] = useState<string[]>(g?.fields ?? [])
  const [fieldsText, setFieldsText] = useState((g?.fields ?? []).join(', '))
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const id = useId()
  const collection = collectionOf(resource.trim(), props.collections)
  const fieldNames = collection ? [...collection.fields.map((f) => f.name), ...systemColumns] : systemColumns
  const at = `grants[${props.index}]`
  const problemAt = (part: string) => fieldError(problem, `${at}.${part}`, `grants.${props.index}.${part}`)

  return (
    <Dialog title={g ? 'Edit the grant' : 'Add a grant'} onClose={props.onClose}>
      <form
        class="access-dialog-body access-grant-form"
        onSubmit={async (e) => {
          e.preventDefault()
          setProblem(null)
          const built = filterOf(draft)
          if (!built.ok) {
            setProblem({
              message: built.message,
              field: `${at}.item_filter`,
              code: 'client',
              status: null,
            })
            return
          }
          const chosen = !limitFields
            ? null
            : collection
              ? fields
              : fieldsText
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean)
          const grant: GrantRow = { resource: resource.trim(), action }
          if (built.filter !== undefined) grant.item_filter = built.filter
          if (chosen && chosen.length > 0) grant.fields = chosen
          setBusy(true)
          try {
            await props.onSave(grant)
          } catch (err) {
            setProblem(refusalOf(err))
            setBusy(false)
          }
        }}
      >
        <ProblemNote problem={problem} />
        <Field
          label="Resource"
          hint="collections/<name> for one collection, collections/* for all, or a system resource."
          error={problemAt('resource')}
        >
          {(fid, describedBy) => (
            <>
              <input
                id={fid}
                list={`${id}-resources`}
                aria-describedby={describedBy}
                autoComplete="off"
                value={resource}
                onInput={(e) => setResource((e.currentTarget as HTMLInputElement).value)}
              />
              <datalist id={`${id}-resources`}>
                {props.collections.map((c) => (
                  <option key={c.name} value={`collections/${c.name}`} />
                ))}
                {systemResources.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field
          label="Action"
          hint="manage implies every action; write implies create, update and delete."
          error={problemAt('action')}
        >
          {(fid, describedBy) => (
            <select
              id={fid}
              aria-describedby={describedBy}
              value={action}
              onChange={(e) => setAction((e.currentTarget as HTMLSelectElement).value)}
            >
              {actions.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ItemFilterEditor draft={draft} onDraft={setDraft} fields={fieldNames} error={problemAt('item_filter')} />
        <fieldset class="access-fields">
          <legend>Fields (columns) this grant reads and writes</legend>
          <div class="access-check">
            <input
              id={`${id}-limit`}
              type="checkbox"
              checked={limitFields}
              onChange={(e) => setLimitFields((e.currentTarget as HTMLInputElement).checked)}
            />
            <label for={`${id}-limit`}>Only some fields (system columns are always readable)</label>
          </div>
          {problemAt('fields') ? <p class="field-error">{problemAt('fields')}</p> : null}
          {!limitFields ? null : collection ? (
            <ul class="access-field-list">
              {collection.fields.map((f) => (
                <li key={f.name} class="access-check">
                  <input
                    id={`${id}-field-${f.name}`}
                    type="checkbox"
                    checked={fields.includes(f.name)}
                    onChange={(e) =>
                      setFields(
                        (e.currentTarget as HTMLInputElement).checked
                          ? [...fields, f.name]
                          : fields.filter((n) => n !== f.name),
                      )
                    }
                  />
                  <label for={`${id}-field-${f.name}`}>{f.name}</label>
                </li>
              ))}
            </ul>
          ) : (
            <div class="field">
              <label for={`${id}-fields`}>Field names, separated by commas</label>
              <input
                id={`${id}-fields`}
                value={fieldsText}
                onInput={(e) => setFieldsText((e.currentTarget as HTMLInputElement).value)}
              />
            </div>
          )}
        </fieldset>
        <div class="access-dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            {g ? 'Save the grant' : 'Add the grant'}
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
