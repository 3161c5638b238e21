import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Button, Field, ProblemNote, TextField } from '../components/form.js'
import { Dialog } from '../components/dialog.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { ConfirmDialog } from '../components/system-confirm.js'
import { Loaded, Time, type Schemas, TableWrap } from '../components/system-list.js'
import type { ScreenProps } from '../screen-props.js'
import './system.css'

type Connection = Schemas['StorageConnection']
type TestOutcome = Schemas['StorageConnectionTest']

const base = '/api/v1/storage-connections'

/**
 * Storage connections: S3-compatible buckets for flows and file containers. The secret key is write-only:
 * it is sent once, at create, and the API never answers it; the form forgets it as soon as it is sent.
 */
export function Storage(_props: ScreenProps) {
  const list = useAsync(async () => (await client.transport.request<{ data: Connection[] }>('GET', base)).data, [])
  const [tests, setTests] = useState<Record<string, TestOutcome | { problem: Problem } | 'running'>>({})
  const [deleting, setDeleting] = useState<Connection | null>(null)
  const [editing, setEditing] = useState<Connection | null>(null)

  async function test(connection: Connection) {
    setTests((t) => ({ ...t, [connection.id]: 'running' }))
    try {
      const outcome = await client.transport.request<TestOutcome>('POST', `${base}/${connection.id}/test`)
      setTests((t) => ({ ...t, [connection.id]: outcome }))
    } catch (err) {
      setTests((t) => ({ ...t, [connection.id]: { problem: problemOf(err) } }))
    }
  }

  return (
    <Page title="Storage connections">
      <p class="system-muted">
        External S3-compatible buckets (R2, S3, MinIO) that flows and file containers can use. Plinth's own file storage
        is configured in the environment.
      </p>
      <CreateConnection onCreated={() => void list.reload()} />
      <h2>Connections</h2>
      <Loaded value={list.value} problem={list.problem} loading={list.loading}>
        {(connections) =>
          connections.length === 0 ? (
            <p class="empty">No storage connections yet.</p>
          ) : (
            <TableWrap label="Connections">
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Label</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Endpoint</th>
                    <th scope="col">Bucket</th>
                    <th scope="col">Access key id</th>
                    <th scope="col">Created</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {connections.map((c) => {
                    const outcome = tests[c.id]
                    return (
                      <tr key={c.id}>
                        <td>{c.label}</td>
                        <td>{c.provider}</td>
                        <td class="system-mono">{c.endpoint}</td>
                        <td class="system-mono">{c.bucketName}</td>
                        <td class="system-mono">{c.accessKeyId}</td>
                        <td class="system-nowrap">
                          <Time value={c.createdAt} />
                        </td>
                        <td>
                          <div class="system-actions">
                            <Button
                              onClick={() => void test(c)}
                              disabled={outcome === 'running'}
                              aria-label={`Test ${c.label}`}
                            >
                              Test
                            </Button>
                            <Button onClick={() => setEditing(c)} aria-label={`Edit ${c.label}`}>
                              Edit
                            </Button>
                            <Button variant="danger" onClick={() => setDeleting(c)} aria-label={`Delete ${c.label}`}>
                              Delete
                            </Button>
                          </div>
                          <div role="status">
                            {outcome === 'running' ? (
                              <p class="system-status">Testing…</p>
                            ) : outcome && 'problem' in outcome ? (
                              <ProblemNote problem={outcome.problem} />
                            ) : outcome ? (
                              <p class={`system-status ${outcome.success ? 'system-ok' : 'system-failed'}`}>
                                {outcome.success ? 'Works: ' : `Failed (${outcome.reason ?? 'unknown'}): `}
                                {outcome.message}
                              </p>
                            ) : null}
                          </div>
                        </td>
                      </tr>
                    )
                  })}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </Loaded>
      {editing ? (
        <EditConnection
          connection={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null)
            // An earlier test said how the old settings fared: not these.
            setTests((t) => {
              const next = { ...t }
              delete next[editing.id]
              return next
            })
            void list.reload()
          }}
        />
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title="Delete this connection?"
          confirmLabel="Delete"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await client.transport.request('DELETE', `${base}/${deleting.id}`)
            await list.reload()
          }}
        >
          <p>
            <strong>{deleting.label}</strong> is removed from Plinth. The bucket and its objects are not touched, and
            the keys are not revoked at the provider.
          </p>
        </ConfirmDialog>
      ) : null}
    </Page>
  )
}

const empty = { label: '', provider: 's3', endpoint: '', region: '', bucketName: '', accessKeyId: '', secretKey: '' }

/** The server names the refused field in details.fields (or details.field); `field` carries it here. */
function CreateConnection(props: { onCreated: () => void }) {
  const [form, setForm] = useState(empty)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [status, setStatus] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const set = (key: keyof typeof empty) => (value: string) => setForm((f) => ({ ...f, [key]: value }))
  const errorOf = (key: string) => (problem?.field === key ? problem.message : undefined)

  async function submit(event: Event) {
    event.preventDefault()
    setBusy(true)
    setProblem(null)
    setStatus(null)
    const { region, ...rest } = form
    try {
      const created = await client.transport.request<{ data: Connection }>('POST', base, {
        body: { ...rest, ...(region.trim() ? { region: region.trim() } : {}) },
      })
      // The secret is gone from the page once sent: the API never shows it back, nor does the form.
      setForm(empty)
      setStatus(`Created ${created.data.label}. Test it to check the bucket answers.`)
      props.onCreated()
    } catch (err) {
      setForm((f) => ({ ...f, secretKey: '' }))
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-connection-title">
      <h2 id="new-connection-title">New connection</h2>
      <div class="storage-form">
        <ConnectionFields
          form={form}
          set={set}
          errorOf={errorOf}
          secret={{
            label: 'Secret key',
            hint: 'Write-only: stored encrypted, never shown again',
            required: true,
            value: form.secretKey,
            onValue: set('secretKey'),
          }}
        />
      </div>
      <ProblemNote problem={problem} />
      {status ? (
        <p class="system-status system-ok" role="status">
          {status}
        </p>
      ) : null}
      <Button type="submit" variant="primary" disabled={busy}>
        Create connection
      </Button>
    </form>
  )
}

/**
 * Changes a connection (PUT: only the fields that differ are sent). The secret is never shown: an empty
 * field keeps the stored one; moving the endpoint to another origin needs a new secret (the server says so).
 */
function EditConnection(props: { connection: Connection; onClose: () => void; onSaved: () => void }) {
  const c = props.connection
  const initial = {
    label: c.label,
    provider: c.provider as string,
    endpoint: c.endpoint,
    region: c.region,
    bucketName: c.bucketName,
    accessKeyId: c.accessKeyId,
  }
  const [form, setForm] = useState(initial)
  const [secretKey, setSecretKey] = useState('')
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  const set = (key: keyof typeof initial) => (value: string) => setForm((f) => ({ ...f, [key]: value }))
  const errorOf = (key: string) => (problem?.field === key ? problem.message : undefined)

  async function submit(event: Event) {
    event.preventDefault()
    setBusy(true)
    setProblem(null)
    const changed = Object.fromEntries(
      Object.entries(form).filter(([key, value]) => value !== initial[key as keyof typeof initial]),
    )
    try {
      await client.transport.request('PUT', `${base}/${c.id}`, {
        body: { ...changed, ...(secretKey ? { secretKey } : {}) },
      })
      setSecretKey('')
      props.onSaved()
    } catch (err) {
      setSecretKey('')
      setProblem(problemOf(err))
      setBusy(false)
    }
  }

  return (
    <Dialog title={`Edit ${c.label}`} onClose={props.onClose}>
      <form class="system-dialog-body" onSubmit={submit}>
        <div>
          <ConnectionFields
            form={form}
            set={set}
            errorOf={errorOf}
            secret={{
              label: 'New secret key',
              hint: 'Empty: keep the stored one. Needed when the endpoint moves to another host.',
              required: false,
              value: secretKey,
              onValue: setSecretKey,
            }}
          />
        </div>
        <ProblemNote problem={problem} />
        <div class="inline">
          <Button type="submit" variant="primary" disabled={busy}>
            Save
          </Button>
          <Button onClick={props.onClose}>Cancel</Button>
        </div>
      </form>
    </Dialog>
  )
}

/** The fields a connection is made of, in the create form and the edit dialog alike; the secret as each needs it. */
type ConnectionForm = Omit<typeof empty, 'secretKey'>

function ConnectionFields(props: {
  form: ConnectionForm
  set: (key: keyof ConnectionForm) => (value: string) => void
  errorOf: (field: string) => string | undefined
  secret: { label: string; hint: string; required: boolean; value: string; onValue: (value: string) => void }
}) {
  const { form, set, errorOf, secret } = props
  return (
    <>
      <TextField label="Label" value={form.label} onValue={set('label')} required error={errorOf('label')} />
      <Field label="Provider" error={errorOf('provider')}>
        {(id) => (
          <select id={id} value={form.provider} onChange={(e) => set('provider')(e.currentTarget.value)}>
            <option value="s3">Amazon S3</option>
            <option value="r2">Cloudflare R2</option>
            <option value="minio">MinIO</option>
          </select>
        )}
      </Field>
      <TextField
        label="Endpoint"
        type="url"
        placeholder="https://…"
        value={form.endpoint}
        onValue={set('endpoint')}
        required
        error={errorOf('endpoint')}
      />
      <TextField
        label="Region"
        hint="Empty: auto"
        value={form.region}
        onValue={set('region')}
        error={errorOf('region')}
      />
      <TextField
        label="Bucket"
        value={form.bucketName}
        onValue={set('bucketName')}
        required
        error={errorOf('bucketName')}
      />
      <TextField
        label="Access key id"
        value={form.accessKeyId}
        onValue={set('accessKeyId')}
        required
        autoComplete="off"
        error={errorOf('accessKeyId')}
      />
      <TextField
        label={secret.label}
        type="password"
        hint={secret.hint}
        value={secret.value}
        onValue={secret.onValue}
        required={secret.required}
        autoComplete="new-password"
        error={errorOf('secretKey')}
      />
    </>
  )
}
