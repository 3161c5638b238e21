import { useEffect, useState } from 'preact/hooks'
import { problemOf, type Problem } from '../api.js'
import { Dialog } from './dialog.js'
import {
  flowsApi,
  pretty,
  triggerLabel,
  when,
  type FlowDetail,
  type FlowWarning,
  type Step,
  type VersionSummary,
} from './flow-api.js'
import { Button, ProblemNote, TextField } from './form.js'

function WarningList(props: { warnings: FlowWarning[] }) {
  if (props.warnings.length === 0) return null
  return (
    <div class="flow-warnings">
      <h3>What runs of the published version would fail on</h3>
      <ul>
        {props.warnings.map((w, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: warnings have no identity
          <li key={i}>
            {w.message}
            {w.fix ? <p class="hint">Fix: {w.fix}</p> : null}
          </li>
        ))}
      </ul>
    </div>
  )
}

export function PublishCard(props: {
  flow: FlowDetail
  busy: boolean
  versions: VersionSummary[]
  onPublish: (summary: string) => void
  onStatus: (status: 'active' | 'inactive') => void
  onRollback: (version: number) => void
}) {
  const [summary, setSummary] = useState('')
  const [confirm, setConfirm] = useState<number | null>(null)
  const [viewing, setViewing] = useState<number | null>(null)
  const { flow } = props
  return (
    <section class="card" aria-labelledby="flow-publish">
      <h2 id="flow-publish">Publish and versions</h2>
      <p class="hint">
        Publishing freezes the draft (saved first) as a new version; only the published version runs, and only while the
        flow is active.
      </p>
      {flow.system ? null : (
        <div class="inline">
          <TextField label="What changed (optional)" value={summary} maxLength={1000} onValue={setSummary} />
          <Button variant="primary" disabled={props.busy} onClick={() => props.onPublish(summary)}>
            Publish
          </Button>
        </div>
      )}
      <div class="inline flow-status-actions">
        {flow.status === 'active' ? (
          <Button disabled={props.busy} onClick={() => props.onStatus('inactive')}>
            Pause
          </Button>
        ) : (
          <Button disabled={props.busy || flow.publishedVersion === null} onClick={() => props.onStatus('active')}>
            Activate
          </Button>
        )}
        <span class="hint-inline">
          {flow.publishedVersion === null ? 'Publish before activating.' : `Status: ${flow.status}.`}
        </span>
      </div>
      <WarningList warnings={flow.warnings} />
      <h3>Versions</h3>
      {props.versions.length === 0 ? (
        <p class="empty">Not published yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="data">
            <caption class="visually-hidden">Versions of {flow.name}</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">What changed</th>
                <th scope="col">Published</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.versions.map((v) => (
                <tr key={v.version}>
                  <td>
                    v{v.version}
                    {v.version === flow.publishedVersion ? <span class="badge flow-badge-active"> running</span> : null}
                  </td>
                  <td>{v.changeSummary || '—'}</td>
                  <td>{when(v.createdAt)}</td>
                  <td>
                    <div class="flow-version-actions">
                      <Button onClick={() => setViewing(v.version)}>View v{v.version}</Button>
                      {flow.system ? null : (
                        <Button disabled={props.busy} onClick={() => setConfirm(v.version)}>
                          Roll back to v{v.version}
                        </Button>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {viewing !== null ? <VersionDialog flowId={flow.id} version={viewing} onClose={() => setViewing(null)} /> : null}
      {confirm !== null ? (
        <Dialog title={`Roll back to version ${confirm}?`} onClose={() => setConfirm(null)}>
          <p>
            The draft is replaced by version {confirm}, which also becomes the published version. Unsaved changes are
            lost. No new version is made.
          </p>
          <div class="inline">
            <Button
              variant="danger"
              onClick={() => {
                const v = confirm
                setConfirm(null)
                props.onRollback(v)
              }}
            >
              Roll back
            </Button>
            <Button onClick={() => setConfirm(null)}>Cancel</Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  )
}

/** One version as it was published: its trigger and its steps. */
function VersionDialog(props: { flowId: string; version: number; onClose: () => void }) {
  const [snapshot, setSnapshot] = useState<Record<string, unknown> | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  useEffect(() => {
    flowsApi.version(props.flowId, props.version).then(
      (v) => setSnapshot(v.snapshot),
      (err) => setProblem(problemOf(err)),
    )
  }, [props.flowId, props.version])
  const steps = Array.isArray(snapshot?.operations) ? (snapshot.operations as Step[]) : []
  return (
    <Dialog title={`Version ${props.version}`} onClose={props.onClose}>
      <ProblemNote problem={problem} />
      {snapshot ? (
        <div class="flow-version">
          <p>
            {triggerLabel(String(snapshot.triggerType))} trigger, {steps.length} step{steps.length === 1 ? '' : 's'}
          </p>
          <ol>
            {steps.map((s) => (
              <li key={s.key}>
                <strong>{s.key}</strong> <span class="badge">{s.type}</span>
                <pre tabIndex={0} aria-label={`Configuration of ${s.key} in version ${props.version}`}>
                  {pretty(s.config)}
                </pre>
              </li>
            ))}
          </ol>
          <details>
            <summary>Trigger settings and options</summary>
            <pre tabIndex={0} aria-label="Trigger settings and options">
              {pretty({ triggerConfig: snapshot.triggerConfig, options: snapshot.options })}
            </pre>
          </details>
        </div>
      ) : problem ? null : (
        <p role="status">Loading…</p>
      )}
    </Dialog>
  )
}
