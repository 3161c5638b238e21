import type { ApiKey, CreatedApiKey } from '@plinth/client'
import { useId, useState } from 'preact/hooks'
import { client, type Problem } from '../api.js'
import {
  actions,
  ConfirmDialog,
  fieldError,
  refusalOf,
  listCollections,
  Notice,
  systemResources,
  Time,
  type CollectionInfo,
} from '../components/access-common.js'
import { Dialog } from '../components/dialog.js'
import { Button, Field, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import type { ScreenProps } from '../screen-props.js'
import { useSession } from '../session.js'
import './access.css'

const day = 24 * 60 * 60

/** /keys: API keys (the project's for an administrator, one's own otherwise); create one, revoke one. */
export function Keys(_props: ScreenProps) {
  const keys = useAsync(() => client.auth.apiKeys.list(), [])
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [revoking, setRevoking] = useState<ApiKey | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const session = useSession()
  const now = Math.floor(Date.now() / 1000)
  const madeBy = (key: ApiKey) =>
    key.user_id === null ? 'nobody (service key)' : key.user_id === session.session.user.id ? 'you' : key.user_id
  return (
    <Page
      title="API keys"
      actions={
        <Button variant="primary" onClick={() => setCreating(true)}>
          New API key
        </Button>
      }
    >
      <p class="hint">
        A key acts for the person who made it, never beyond their role, and only within its capabilities.
      </p>
      <ProblemNote problem={keys.problem} />
      <Notice text={notice} />
      {keys.value ? (
        keys.value.length === 0 ? (
          <p class="empty">No API keys yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col">Capabilities</th>
                  <th scope="col">Made by</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {keys.value.map((key) => (
                  <tr key={key.id}>
                    <td>
                      {key.label}{' '}
                      {key.expires_at !== null && key.expires_at <= now ? (
                        <span class="badge access-badge-danger">expired</span>
                      ) : null}
                    </td>
                    <td>
                      <ul class="access-capabilities">
                        {key.capabilities.map((c) => (
                          <li key={c}>
                            <code>{c}</code>
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>{madeBy(key)}</td>
                    <td>
                      <Time seconds={key.created_at} />
                    </td>
                    <td>
                      <Time seconds={key.expires_at} none="never" />
                    </td>
                    <td>
                      <Time seconds={key.last_used_at} none="never" />
                    </td>
                    <td>
                      <Button variant="danger" aria-label={`Revoke ${key.label}`} onClick={() => setRevoking(key)}>
                        Revoke
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : keys.loading ? (
        <p role="status">Loading keys…</p>
      ) : null}
      {creating ? (
        <CreateKey
          superAdmin={session.session.user.role === 'super_admin'}
          onClose={() => setCreating(false)}
          onCreated={async (key) => {
            setCreating(false)
            setCreated(key)
            await keys.reload()
          }}
        />
      ) : null}
      {created ? <ShowOnce created={created} onClose={() => setCreated(null)} /> : null}
      {revoking ? (
        <ConfirmDialog
          title={`Revoke the key ${revoking.label}?`}
          confirmLabel="Revoke the key"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await client.auth.apiKeys.revoke(revoking.id)
            setNotice(`The key ${revoking.label} was revoked.`)
            await keys.reload()
          }}
        >
          <p>Requests made with it are refused at once. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

/** The raw key, shown once, with a Copy button. */
function ShowOnce(props: { created: CreatedApiKey; onClose: () => void }) {
  const [copied, setCopied] = useState<string | null>(null)
  const id = useId()
  return (
    <Dialog title="Your new API key" onClose={props.onClose}>
      <div class="access-dialog-body">
        <p>
          <strong>Copy it now: you will not see it again.</strong> Plinth keeps only a hash of it. If it is lost, revoke
          it and make a new one.
        </p>
        <p class="access-label" id={`${id}-label`}>
          The key “{props.created.label}”
        </p>
        <p class="secret" aria-labelledby={`${id}-label`} data-testid="raw-key">
          {props.created.raw}
        </p>
        <p role="status" class="access-notice">
          {copied ?? ''}
        </p>
        <div class="access-dialog-actions">
          <Button
            onClick={async () => {
              try {
                await navigator.clipboard.writeText(props.created.raw)
                setCopied('Copied to the clipboard.')
              } catch {
                setCopied('The browser would not copy it: select the key and copy it yourself.')
              }
            }}
          >
            Copy
          </Button>
          <Button variant="primary" onClick={props.onClose}>
            I have copied it
          </Button>
        </div>
      </div>
    </Dialog>
  )
}

function CreateKey(props: { superAdmin: boolean; onClose: () => void; onCreated: (key: CreatedApiKey) => void }) {
  const [label, setLabel] = useState('')
  const [capabilities, setCapabilities] = useState<string[]>([])
  const [resource, setResource] = useState('collections/*')
  const [action, setAction] = useState('read')
  const [expiry, setExpiry] = useState('30')
  const [date, setDate] = useState('')
  const [service, setService] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const collections = useAsync<CollectionInfo[]>(listCollections, [])
  const id = useId()
  const add = () => {
    const cap = `${resource.trim()}:${action}`
    if (resource.trim() && !capabilities.includes(cap)) setCapabilities([...capabilities, cap])
  }
  return (
    <Dialog title="New API key" onClose={props.onClose}>
      <form
        class="access-dialog-body"
        onSubmit={async (e) => {
          e.preventDefault()
          setProblem(null)
          if (capabilities.length === 0) {
            setProblem({
              message: 'Add at least one capability (a resource and an action).',
              field: 'capabilities',
              code: 'client',
              status: null,
            })
            return
          }
          let expiresAt: number | null = null
          if (expiry === 'date') {
            const at = Date.parse(`${date}T23:59:59`)
            if (!date || Number.isNaN(at)) {
              setProblem({ message: 'Choose the day it expires.', field: 'expires_at', code: 'client', status: null })
              return
            }
            expiresAt = Math.floor(at / 1000)
          } else if (expiry !== 'never') expiresAt = Math.floor(Date.now() / 1000) + Number(expiry) * day
          setBusy(true)
          try {
            props.onCreated(
              await client.auth.apiKeys.create({
                label: label.trim(),
                capabilities,
                expiresAt,
                ...(service ? { service: true } : {}),
              }),
            )
          } catch (err) {
            setProblem(refusalOf(err))
            setBusy(false)
          }
        }}
      >
        <ProblemNote problem={problem} />
        <TextField
          label="Label"
          hint="What it is for, e.g. “nightly export”."
          value={label}
          onValue={setLabel}
          autoComplete="off"
          error={fieldError(problem, 'label')}
        />
        <fieldset class="access-capability-picker">
          <legend>Capabilities</legend>
          <p class="hint">Each is a resource and an action; the key can do no more than these, and no more than you.</p>
          {fieldError(problem, 'capabilities') ? (
            <p class="field-error">{fieldError(problem, 'capabilities')}</p>
          ) : null}
          {capabilities.length === 0 ? (
            <p class="access-sub">None chosen yet.</p>
          ) : (
            <ul class="access-chosen" aria-label="Chosen capabilities">
              {capabilities.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                  <Button
                    aria-label={`Remove ${c}`}
                    onClick={() => setCapabilities(capabilities.filter((x) => x !== c))}
                  >
                    Remove
                  </Button>
                </li>
              ))}
            </ul>
          )}
          <div class="inline">
            <div class="field">
              <label for={`${id}-resource`}>Resource</label>
              <input
                id={`${id}-resource`}
                list={`${id}-resources`}
                autoComplete="off"
                value={resource}
                onInput={(e) => setResource((e.currentTarget as HTMLInputElement).value)}
              />
              <datalist id={`${id}-resources`}>
                {(collections.value ?? []).map((c) => (
                  <option key={c.name} value={`collections/${c.name}`} />
                ))}
                {systemResources.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            </div>
            <div class="field">
              <label for={`${id}-action`}>Action</label>
              <select
                id={`${id}-action`}
                value={action}
                onChange={(e) => setAction((e.currentTarget as HTMLSelectElement).value)}
              >
                {actions.map((a) => (
                  <option key={a} value={a}>
                    {a}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <Button onClick={add}>Add the capability</Button>
            </div>
          </div>
        </fieldset>
        <Field label="Expires" error={fieldError(problem, 'expires_at')}>
          {(fid, describedBy) => (
            <select
              id={fid}
              aria-describedby={describedBy}
              value={expiry}
              onChange={(e) => setExpiry((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="7">in 7 days</option>
              <option value="30">in 30 days</option>
              <option value="90">in 90 days</option>
              <option value="365">in a year</option>
              <option value="date">on a day I choose</option>
              <option value="never">never</option>
            </select>
          )}
        </Field>
        {props.superAdmin ? (
          <div class="access-check">
            <input
              id={`${id}-service`}
              type="checkbox"
              checked={service}
              aria-describedby={`${id}-service-hint`}
              onChange={(e) => setService((e.currentTarget as HTMLInputElement).checked)}
            />
            <label for={`${id}-service`}>Service key</label>
            <p class="hint" id={`${id}-service-hint`}>
              Bound to nobody: it acts with exactly its capabilities, and keeps working whatever happens to your
              account.
            </p>
          </div>
        ) : null}
        {expiry === 'date' ? <TextField label="Expiry day" type="date" value={date} onValue={setDate} /> : null}
        <div class="access-dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={busy}>
            Create the key
          </Button>
        </div>
      </form>
    </Dialog>
  )
}
