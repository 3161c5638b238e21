import { useState } from 'preact/hooks'
import { client, type Problem } from '../api.js'
import {
  ConfirmDialog,
  fieldError,
  refusalOf,
  listRoles,
  Notice,
  Time,
  type RoleRow,
  type UserRow,
} from '../components/access-common.js'
import { Dialog } from '../components/dialog.js'
import { Button, Field, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { useSession } from '../session.js'
import './access.css'

interface UserPage {
  data: UserRow[]
  total: number
  page: number
  limit: number
  hasMore: boolean
}

const limit = 25

const who = (u: UserRow) => u.email ?? u.username ?? u.id

/** /users: the project's accounts, a page at a time; create, change role, ban or unban, delete. */
export function Users(props: ScreenProps) {
  const page = Math.max(1, Number(props.query.get('page') ?? '1') || 1)
  const users = useAsync(
    () => client.transport.request<UserPage>('GET', '/api/v1/users', { query: { page, limit } }),
    [page],
  )
  // Roles to choose from; a caller who may not read roles types the role's name instead.
  const roles = useAsync(() => listRoles().catch((): RoleRow[] | null => null), [])
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState<UserRow | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const session = useSession()

  const change = async (user: UserRow, body: { role?: string; banned?: boolean }, done: string) => {
    setProblem(null)
    setNotice(null)
    try {
      await client.transport.request('PATCH', `/api/v1/users/${encodeURIComponent(user.id)}`, { body })
      setNotice(done)
      await users.reload()
    } catch (err) {
      setProblem(refusalOf(err))
    }
  }
  const list = users.value
  const last = list ? Math.max(1, Math.ceil(list.total / limit)) : 1

  return (
    <Page
      title="Users"
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          New user
        </Button>
      }
    >
      <ProblemNote problem={users.problem ?? problem} />
      <Notice text={notice} />
      {!list ? (
        users.loading ? (
          <p role="status">Loading users…</p>
        ) : null
      ) : list.data.length === 0 ? (
        <p class="empty">No users on this page.</p>
      ) : (
        <>
          <div class="table-wrap">
            <table class="data">
              <caption class="visually-hidden">
                Users, page {list.page} of {last}
              </caption>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last sign-in</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((user) => (
                  <UserLine
                    key={user.id}
                    user={user}
                    self={user.id === session.session.user.id}
                    roles={roles.value ?? null}
                    onRole={(role) => change(user, { role }, `${who(user)} now has the role ${role}.`)}
                    onBan={() =>
                      change(
                        user,
                        { banned: !user.banned },
                        user.banned ? `${who(user)} may sign in again.` : `${who(user)} is banned.`,
                      )
                    }
                    onDelete={() => setDeleting(user)}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <nav class="access-pager" aria-label="Pages of users">
            <Button disabled={page <= 1} onClick={() => navigate(`/users?page=${page - 1}`)}>
              Previous page
            </Button>
            <span>
              Page {list.page} of {last} · {list.total} {list.total === 1 ? 'user' : 'users'}
            </span>
            <Button disabled={!list.hasMore} onClick={() => navigate(`/users?page=${page + 1}`)}>
              Next page
            </Button>
          </nav>
        </>
      )}
      {creating ? (
        <CreateUser
          roles={roles.value ?? null}
          onClose={() => setCreating(false)}
          onCreated={async (user) => {
            setCreating(false)
            setNotice(`${who(user)} was created.`)
            await users.reload()
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title="Delete this user?"
          confirmLabel="Delete the user"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await client.transport.request('DELETE', `/api/v1/users/${encodeURIComponent(deleting.id)}`)
            setNotice(`${who(deleting)} was deleted.`)
            await users.reload()
          }}
        >
          <p>
            <strong>{who(deleting)}</strong> will be removed with every session. Relations that point at the account
            apply their on-delete rule. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

function UserLine(props: {
  user: UserRow
  self: boolean
  roles: RoleRow[] | null
  onRole: (role: string) => Promise<void>
  onBan: () => Promise<void>
  onDelete: () => void
}) {
  const { user } = props
  const [role, setRole] = useState(user.role)
  const label = who(user)
  return (
    <tr>
      <td>
        <span class="access-strong">{user.name || label}</span>
        {user.name ? <span class="access-sub">{label}</span> : null}
        {props.self ? <span class="badge">you</span> : null}
      </td>
      <td>
        <div class="access-row-form">
          {props.roles ? (
            <select
              aria-label={`Role of ${label}`}
              value={role}
              onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value)}
            >
              {props.roles.some((r) => r.name === user.role) ? null : <option value={user.role}>{user.role}</option>}
              {props.roles.map((r) => (
                <option key={r.id} value={r.name}>
                  {r.name}
                </option>
              ))}
            </select>
          ) : (
            <input
              aria-label={`Role of ${label}`}
              value={role}
              onInput={(e) => setRole((e.currentTarget as HTMLInputElement).value)}
            />
          )}
          <Button
            disabled={role === user.role}
            aria-label={`Change the role of ${label}`}
            onClick={() => void props.onRole(role)}
          >
            Change
          </Button>
        </div>
      </td>
      <td>
        {user.banned ? <span class="badge access-badge-danger">banned</span> : <span class="badge">active</span>}
        {user.totpEnabled ? <span class="badge">two-factor</span> : null}
      </td>
      <td>
        <Time seconds={user.lastSignInAt} none="never" />
      </td>
      <td>
        {props.self ? (
          <span class="access-sub">Your own account cannot be banned or deleted here.</span>
        ) : (
          <div class="access-actions">
            <Button aria-label={`${user.banned ? 'Unban' : 'Ban'} ${label}`} onClick={() => void props.onBan()}>
              {user.banned ? 'Unban' : 'Ban'}
            </Button>
            <Button variant="danger" aria-label={`Delete ${label}`} onClick={props.onDelete}>
              Delete
            </Button>
          </div>
        )}
      </td>
    </tr>
  )
}

function CreateUser(props: { roles: RoleRow[] | null; onClose: () => void; onCreated: (user: UserRow) => void }) {
  const [email, setEmail] = useState('')
  const [username, setUsername] = useState('')
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')
  const firstRole = props.roles?.find((r) => r.name === 'viewer')?.name ?? props.roles?.[0]?.name ?? ''
  const [role, setRole] = useState(firstRole)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const assignable = (props.roles ?? []).filter((r) => r.name !== 'public')
  return (
    <Dialog title="New user" onClose={props.onClose}>
      <form
        class="access-dialog-body"
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setProblem(null)
          try {
            const created = await client.transport.request<{ data: UserRow }>('POST', '/api/v1/users', {
              body: { email: email.trim() || undefined, username: username.trim() || undefined, name, password, role },
            })
            props.onCreated(created.data)
          } catch (err) {
            setProblem(refusalOf(err))
            setBusy(false)
          }
        }}
      >
        <ProblemNote problem={problem} />
        <TextField
          label="Email"
          type="email"
          autoComplete="off"
          value={email}
          onValue={setEmail}
          error={fieldError(problem, 'email')}
        />
        <TextField
          label="Username (optional)"
          hint="3 to 32 letters, digits, dots, dashes or underscores; for username sign-in."
          autoComplete="off"
          value={username}
          onValue={setUsername}
          error={fieldError(problem, 'username')}
        />
        <TextField label="Name" value={name} onValue={setName} error={fieldError(problem, 'name')} />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          hint="8 to 256 characters. The person can change it with a reset link."
          value={password}
          onValue={setPassword}
          error={fieldError(problem, 'password')}
        />
        <Field label="Role" error={fieldError(problem, 'role')}>
          {(id, describedBy) =>
            props.roles ? (
              <select
                id={id}
                aria-describedby={describedBy}
                value={role}
                onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value)}
              >
                {assignable.map((r) => (
                  <option key={r.id} value={r.name}>
                    {r.name}
                    {r.adminAccess ? ' (admin access)' : ''}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                aria-describedby={describedBy}
                value={role}
                onInput={(e) => setRole((e.currentTarget as HTMLInputElement).value)}
              />
            )
          }
        </Field>
        <div class="access-dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            Create the user
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
