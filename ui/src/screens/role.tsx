import { useId, useState } from 'preact/hooks'
import { client, type Problem } from '../api.js'
import {
  actions,
  ConfirmDialog,
  listCollections,
  listRoles,
  Notice,
  fieldError,
  refusalOf,
  systemResources,
  type CollectionInfo,
  type GrantRow,
  type RoleRow,
} from '../components/access-common.js'
import { describeFilter, draftOf, filterOf, ItemFilterEditor, type FilterDraft } from '../components/access-filter.js'
import { RoleDialog } from '../components/access-role-form.js'
import { Dialog } from '../components/dialog.js'
import { Button, Field, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { RolePreview } from '../components/access-preview.js'
import './access.css'

const systemColumns = ['id', 'created_at', 'updated_at', 'created_by', 'updated_by', 'owned_by']

/** A stored filter the server could not parse comes back as `{ "_invalid": "<reason>" }`. */
const unreadable = (filter: unknown) =>
  typeof filter === 'object' && filter !== null && '_invalid' in filter && Object.keys(filter).length === 1

const grantsPath = (id: string) => `/api/v1/roles/${encodeURIComponent(id)}/grants`

/** The collection a resource names (`collections/posts`), if it names exactly one. */
function collectionOf(resource: string, collections: readonly CollectionInfo[]): CollectionInfo | undefined {
  const m = /^collections\/([^*/]+)$/.exec(resource)
  return m ? collections.find((c) => c.name === m[1]) : undefined
}

/** /roles/:id: a role, its grants (listed, added, edited, removed) and what they let it see. */
export function Role(props: ScreenProps) {
  const id = props.params.id ?? ''
  const data = useAsync(async () => {
    const [roles, grants, collections] = await Promise.all([
      listRoles(),
      client.transport.request<{ data: GrantRow[] }>('GET', grantsPath(id)).then((r) => r.data),
      listCollections(),
    ])
    const role = roles.find((r) => r.id === id)
    if (!role) throw Object.assign(new Error('There is no such role.'), { code: 'not_found' })
    return { role, grants, collections }
  }, [id])
  const [editingRole, setEditingRole] = useState(false)
  const [editing, setEditing] = useState<{ index: number | null } | null>(null)
  const [removing, setRemoving] = useState<number | null>(null)
  const [notice, setNotice] = useState<string | null>(null)

  const value = data.value
  const title = value ? `Role ${value.role.name}` : 'Role'
  const save = async (grants: GrantRow[]) => {
    await client.transport.request<{ data: GrantRow[] }>('PUT', grantsPath(id), { body: { grants } })
    await data.reload()
  }

  return (
    <Page
      title={title}
      actions={value ? <Button onClick={() => setEditingRole(true)}>Edit the role</Button> : undefined}
    >
      <p>
        <Link to="/roles">All roles</Link>
      </p>
      <ProblemNote problem={data.problem} />
      <Notice text={notice} />
      {value ? (
        <>
          <section class="card" aria-labelledby="role-about">
            <h2 id="role-about">About</h2>
            <p>{value.role.description || 'No description.'}</p>
            {value.role.name === 'public' ? (
              <p>
                Everyone who is not signed in acts as this role: its grants open data to the whole internet. Give it{' '}
                <code>system/users</code> create to open sign-up.
              </p>
            ) : null}

            <p>
              {value.role.builtIn ? <span class="badge">built-in</span> : null}{' '}
              {value.role.adminAccess ? <span class="badge">admin access</span> : null}
            </p>
          </section>
          {value.role.adminAccess ? (
            <section class="card" aria-labelledby="grants-title">
              <h2 id="grants-title">Grants</h2>
              <p>
                This role has admin access: it may do everything in its project, and grants do not limit it. Its grants
                cannot be changed.
              </p>
            </section>
          ) : (
            <>
              <section aria-labelledby="grants-title" class="access-section">
                <div class="access-section-header">
                  <h2 id="grants-title">Grants</h2>
                  <Button variant="primary" onClick={() => setEditing({ index: null })}>
                    Add a grant
                  </Button>
                </div>
                {value.grants.length === 0 ? (
                  <p class="empty">No grants: this role may do nothing.</p>
                ) : (
                  <div class="table-wrap">
                    <table class="data">
                      <thead>
                        <tr>
                          <th scope="col">Resource</th>
                          <th scope="col">Action</th>
                          <th scope="col">Rows (item filter)</th>
                          <th scope="col">Fields</th>
                          <th scope="col">Actions</th>
                        </tr>
                      </thead>
                      <tbody>
                        {value.grants.map((g, i) => (
                          <tr key={`${g.resource}:${g.action}:${i}`}>
                            <td>
                              <code>{g.resource}</code>
                            </td>
                            <td>{g.action}</td>
                            <td>
                              {g.item_filter === undefined || g.item_filter === null ? (
                                'every row'
                              ) : (
                                <>
                                  <code class="access-filter-code">{JSON.stringify(g.item_filter)}</code>
                                  {unreadable(g.item_filter) ? (
                                    <span class="access-sub access-warning">
                                      This stored filter cannot be read, so the grant reaches no row. Edit it and write
                                      a valid filter.
                                    </span>
                                  ) : null}
                                </>
                              )}
                            </td>
                            <td>{g.fields && g.fields.length > 0 ? g.fields.join(', ') : 'all'}</td>
                            <td>
                              <div class="access-actions">
                                <Button
                                  aria-label={`Edit grant ${i + 1}, ${g.resource} ${g.action}`}
                                  onClick={() => setEditing({ index: i })}
                                >
                                  Edit
                                </Button>
                                <Button
                                  variant="danger"
                                  aria-label={`Remove grant ${i + 1}, ${g.resource} ${g.action}`}
                                  onClick={() => setRemoving(i)}
                                >
                                  Remove
                                </Button>
                              </div>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
              </section>
              <Summary grants={value.grants} />
              <RolePreview roleId={value.role.id} collections={value.collections} />
            </>
          )}
          {editingRole ? (
            <RoleDialog
              role={value.role}
              onClose={() => setEditingRole(false)}
              onSaved={async (role: RoleRow) => {
                setEditingRole(false)
                setNotice(`The role ${role.name} was saved.`)
                await data.reload()
              }}
            />
          ) : null}
          {editing ? (
            <GrantDialog
              grant={editing.index === null ? undefined : value.grants[editing.index]}
              index={editing.index ?? value.grants.length}
              collections={value.collections}
              onClose={() => setEditing(null)}
              onSave={async (grant) => {
                const grants =
                  editing.index === null
                    ? [...value.grants, grant]
                    : value.grants.map((g, i) => (i === editing.index ? grant : g))
                await save(grants)
                setEditing(null)
                setNotice(editing.index === null ? 'The grant was added.' : 'The grant was saved.')
              }}
            />
          ) : null}
          {removing !== null && value.grants[removing] ? (
            <ConfirmDialog
              title="Remove this grant?"
              confirmLabel="Remove the grant"
              onClose={() => setRemoving(null)}
              onConfirm={async () => {
                await save(value.grants.filter((_, i) => i !== removing))
                setNotice('The grant was removed.')
              }}
            >
              <p>
                The role will no longer hold <code>{value.grants[removing].resource}</code>{' '}
                {value.grants[removing].action}. Users with this role lose it on their next request.
              </p>
            </ConfirmDialog>
          ) : null}
        </>
      ) : data.loading ? (
        <p role="status">Loading the role…</p>
      ) : null}
    </Page>
  )
}

/** What the role can see, said from its grants: per resource, the actions, the rows and the columns. */
function Summary(props: { grants: GrantRow[] }) {
  // Per resource, the actions that share the same rows and columns, said once.
  const byResource = new Map<string, Map<string, { actions: string[]; rows: string; fields: string }>>()
  for (const g of props.grants) {
    const rows = describeFilter(g.item_filter)
    const fields = g.fields && g.fields.length > 0 ? `; only the fields ${g.fields.join(', ')}` : ''
    const lines = byResource.get(g.resource) ?? new Map()
    const line = lines.get(rows + fields) ?? { actions: [], rows, fields }
    line.actions.push(g.action)
    lines.set(rows + fields, line)
    byResource.set(g.resource, lines)
  }
  return (
    <section class="card" aria-labelledby="summary-title">
      <h2 id="summary-title">What this role can see and do</h2>
      <p class="hint">
        Read from the grants above (grants on one resource add up); the preview below runs them against the records.
      </p>
      {byResource.size === 0 ? (
        <p>Nothing.</p>
      ) : (
        <ul class="access-summary">
          {[...byResource].map(([resource, lines]) => (
            <li key={resource}>
              <code>{resource}</code>
              <ul>
                {[...lines.values()].map((line) => (
                  <li key={line.actions.join()}>
                    {line.actions.join(', ')}: {line.rows}
                    {line.fields}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

function GrantDialog(props: {
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
