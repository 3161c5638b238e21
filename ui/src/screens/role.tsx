import { useState } from 'preact/hooks'
import { client } from '../api.js'
import {
  ConfirmDialog,
  listCollections,
  listRoles,
  Notice,
  type GrantRow,
  type RoleRow,
} from '../components/access-common.js'
import { describeFilter } from '../components/access-filter.js'
import { GrantDialog } from '../components/access-grant-dialog.js'
import { RoleDialog } from '../components/access-role-form.js'
import { Button, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { RolePreview } from '../components/access-preview.js'
import './access.css'

/** A stored filter the server could not parse comes back as `{ "_invalid": "<reason>" }`. */
const unreadable = (filter: unknown) =>
  typeof filter === 'object' && filter !== null && '_invalid' in filter && Object.keys(filter).length === 1

const grantsPath = (id: string) => `/api/v1/roles/${encodeURIComponent(id)}/grants`

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
