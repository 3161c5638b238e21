import { useState } from 'preact/hooks'
import {
  flowProblemOf,
  flowsApi,
  starterTriggerConfig,
  triggerLabel,
  triggerTypes,
  when,
  type Flow,
  type FlowProblem,
  type TriggerType,
} from '../components/flow-api.js'
import { Button, Field, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { useAsync } from '../components/use-async.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import './flows.css'

/** A flow's status in words: draft, active or paused, and which version runs. */
export function FlowStatus(props: { flow: Pick<Flow, 'status' | 'publishedVersion' | 'currentVersion'> }) {
  const { flow } = props
  const label = flow.status === 'inactive' ? 'paused' : flow.status
  return (
    <span class="flow-status">
      <span class={`badge flow-badge-${flow.status}`}>{label}</span>{' '}
      <span class="hint-inline">
        {flow.publishedVersion === null ? 'not published' : `v${flow.publishedVersion} published`}
      </span>
    </span>
  )
}

/** /flows: every flow of the project, and a form to start a new one. */
export function Flows(_props: ScreenProps) {
  const flows = useAsync(() => flowsApi.list(), [])
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Flows"
      actions={
        <Button variant="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          New flow
        </Button>
      }
    >
      {creating ? <CreateFlow onCancel={() => setCreating(false)} /> : null}
      <ProblemNote problem={flows.problem} />
      {flows.value === undefined ? (
        flows.loading ? (
          <p role="status">Loading…</p>
        ) : null
      ) : flows.value.length === 0 ? (
        <p class="empty">No flows yet. A flow is a trigger and a list of steps that run on the server.</p>
      ) : (
        <div class="table-wrap">
          <table class="data">
            <caption class="visually-hidden">Flows</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Trigger</th>
                <th scope="col">Status</th>
                <th scope="col">Last run</th>
                <th scope="col">Runs</th>
              </tr>
            </thead>
            <tbody>
              {flows.value.map((flow) => (
                <tr key={flow.id}>
                  <td>
                    <Link to={`/flows/${flow.id}`}>{flow.name}</Link>
                    {flow.system ? <span class="badge flow-system">system</span> : null}
                  </td>
                  <td>{triggerLabel(flow.triggerType)}</td>
                  <td>
                    <FlowStatus flow={flow} />
                  </td>
                  <td>{when(flow.lastRunAt)}</td>
                  <td>
                    <Link to={`/flows/${flow.id}/runs`}>
                      {flow.runCount} runs
                      <span class="visually-hidden"> of {flow.name}</span>
                    </Link>
                    {flow.errorCount ? <span class="flow-errors"> ({flow.errorCount} failed)</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  )
}

function CreateFlow(props: { onCancel: () => void }) {
  const [name, setName] = useState('')
  const [trigger, setTrigger] = useState<TriggerType>('manual')
  const [problem, setProblem] = useState<FlowProblem | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      class="card flow-create"
      aria-labelledby="new-flow-title"
      onSubmit={async (e) => {
        e.preventDefault()
        setBusy(true)
        setProblem(null)
        try {
          const flow = await flowsApi.create({
            name,
            triggerType: trigger,
            triggerConfig: starterTriggerConfig(trigger),
            operations: [],
          })
          navigate(`/flows/${flow.id}`)
        } catch (err) {
          setProblem(flowProblemOf(err))
          setBusy(false)
        }
      }}
    >
      <h2 id="new-flow-title">New flow</h2>
      <ProblemNote problem={problem} />
      <TextField
        label="Name"
        value={name}
        required
        maxLength={200}
        onValue={setName}
        error={problem?.path === 'name' ? problem.message : undefined}
      />
      <Field
        label="Trigger"
        hint="What starts it. The trigger's settings are edited next."
        error={problem?.path?.startsWith('trigger') ? problem.message : undefined}
      >
        {(id, describedBy) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={trigger}
            onChange={(e) => setTrigger((e.currentTarget as HTMLSelectElement).value as TriggerType)}
          >
            {triggerTypes.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <div class="inline">
        <button type="submit" class="button button-primary" disabled={busy}>
          Create the flow
        </button>
        <Button onClick={props.onCancel}>Cancel</Button>
      </div>
    </form>
  )
}
