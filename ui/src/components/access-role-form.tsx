import { useId, useState } from 'preact/hooks'
import { client, type Problem } from '../api.js'
import { fieldError, refusalOf, type RoleRow } from './access-common.js'
import { Dialog } from './dialog.js'
import { Button, Field, ProblemNote, TextField } from './form.js'

/** Creates a role (no `role`) or edits one: name, description, admin access. Built-in roles keep name and admin access. */
export function RoleDialog(props: { role?: RoleRow; onClose: () => void; onSaved: (role: RoleRow) => void }) {
  const existing = props.role
  const [name, setName] = useState(existing?.name ?? '')
  const [description, setDescription] = useState(existing?.description ?? '')
  const [adminAccess, setAdminAccess] = useState(existing?.adminAccess ?? false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const adminId = useId()
  const builtIn = existing?.builtIn ?? false
  return (
    <Dialog title={existing ? `Edit the role ${existing.name}` : 'New role'} onClose={props.onClose}>
      <form
        class="access-dialog-body"
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setProblem(null)
          try {
            const body: Record<string, unknown> = { description }
            if (!builtIn) {
              if (!existing || name !== existing.name) body.name = name
              if (!existing || adminAccess !== existing.adminAccess) body.adminAccess = adminAccess
            }
            const saved = existing
              ? await client.transport.request<{ data: RoleRow }>(
                  'PATCH',
                  `/api/v1/roles/${encodeURIComponent(existing.id)}`,
                  { body },
                )
              : await client.transport.request<{ data: RoleRow }>('POST', '/api/v1/roles', { body })
            props.onSaved(saved.data)
          } catch (err) {
            setProblem(refusalOf(err))
            setBusy(false)
          }
        }}
      >
        <ProblemNote problem={problem} />
        <TextField
          label="Name"
          hint={
            builtIn
              ? 'A built-in role keeps its name.'
              : '2 to 50 lower-case letters, digits, - or _, starting with a letter.'
          }
          value={name}
          onValue={setName}
          disabled={builtIn}
          autoComplete="off"
          error={fieldError(problem, 'name')}
        />
        <Field label="Description" error={fieldError(problem, 'description')}>
          {(id, describedBy) => (
            <textarea
              id={id}
              class="access-description"
              aria-describedby={describedBy}
              maxLength={500}
              value={description}
              onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)}
            />
          )}
        </Field>
        <div class="access-check">
          <input
            id={adminId}
            type="checkbox"
            checked={adminAccess}
            disabled={builtIn}
            aria-describedby={`${adminId}-hint`}
            onChange={(e) => setAdminAccess((e.currentTarget as HTMLInputElement).checked)}
          />
          <label for={adminId}>Admin access</label>
          <p class="hint" id={`${adminId}-hint`}>
            {builtIn
              ? 'Fixed for a built-in role.'
              : 'Everything in the project, whatever the grants. Only an administrator may give it.'}
          </p>
        </div>
        {fieldError(problem, 'adminAccess') ? <p class="field-error">{problem?.message}</p> : null}
        <div class="access-dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            {existing ? 'Save the role' : 'Create the role'}
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
