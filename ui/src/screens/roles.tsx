import { useState } from 'preact/hooks'
import { client } from '../api.js'
import { ConfirmDialog, listRoles, Notice, type RoleRow } from '../components/access-common.js'
import { RoleDialog } from '../components/access-role-form.js'
import { Button, ProblemNote } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import './access.css'

/** /roles: the project's roles, built-in ones marked; create, edit, delete a custom role. */
export function Roles(_props: ScreenProps) {
  const roles = useAsync(listRoles, [])
  const [editing, setEditing] = useState<RoleRow | 'new' | null>(null)
  const [deleting, setDeleting] = useState<RoleRow | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  return (
    <Page
      title="Roles"
      actions={
        <Button variant="primary" onClick={() => setEditing('new')}>
          New role
        </Button>
      }
    >
      <ProblemNote problem={roles.problem} />
      <Notice text={notice} />
      {roles.value ? (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Description</th>
                <th scope="col">Access</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {roles.value.map((role) => (
                <tr key={role.id}>
                  <td>
                    <Link to={`/roles/${encodeURIComponent(role.id)}`}>{role.name}</Link>{' '}
                    {role.builtIn ? <span class="badge">built-in</span> : null}
                  </td>
                  <td>{role.description || <span class="access-sub">—</span>}</td>
                  <td>{role.adminAccess ? <span class="badge">admin access</span> : 'its grants'}</td>
                  <td>
                    <div class="access-actions">
                      <Button aria-label={`Edit ${role.name}`} onClick={() => setEditing(role)}>
                        Edit
                      </Button>
                      {role.builtIn ? null : (
                        <Button variant="danger" aria-label={`Delete ${role.name}`} onClick={() => setDeleting(role)}>
                          Delete
                        </Button>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : roles.loading ? (
        <p role="status">Loading roles…</p>
      ) : null}
      {editing ? (
        <RoleDialog
          {...(editing === 'new' ? {} : { role: editing })}
          onClose={() => setEditing(null)}
          onSaved={async (role) => {
            const created = editing === 'new'
            setEditing(null)
            if (created) navigate(`/roles/${encodeURIComponent(role.id)}`)
            else {
              setNotice(`The role ${role.name} was saved.`)
              await roles.reload()
            }
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title={`Delete the role ${deleting.name}?`}
          confirmLabel="Delete the role"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await client.transport.request('DELETE', `/api/v1/roles/${encodeURIComponent(deleting.id)}`)
            setNotice(`The role ${deleting.name} was deleted.`)
            await roles.reload()
          }}
        >
          <p>
            The role and its grants go. A role still held by a user cannot be deleted: give them another role first.
          </p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}
