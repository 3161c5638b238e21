import type { DryRunResult } from '@plinth/client'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from '../components/dialog.js'
import {
  duration,
  flowProblemOf,
  flowsApi,
  locate,
  operationsCatalog,
  optionsSchema,
  pretty,
  starterTriggerConfig,
  triggerLabel,
  triggerSchema,
  triggerTypes,
  when,
  type FlowDetail,
  type FlowProblem,
  type FlowWarning,
  type OperationInfo,
  type Step,
  type TriggerType,
  type VersionSummary,
} from '../components/flow-api.js'
import { FlowStepCard } from '../components/flow-step.js'
import { Button, Field, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { JsonField, SchemaForm, type FieldErrors, type JsonSchema } from '../components/schema-form.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { FlowStatus } from './flows.js'
import './flows.css'

interface Draft {
  name: string
  triggerType: TriggerType
  triggerConfig: Record<string, unknown>
  options: Record<string, unknown>
  runAs: string
  /** Steps with a local id, so a card keeps its state when steps move. */
  steps: { uid: number; step: Step }[]
}

let uids = 0
const draftOf = (flow: FlowDetail): Draft => ({
  name: flow.name,
  triggerType: flow.triggerType,
  triggerConfig: flow.triggerConfig,
  options: flow.options,
  runAs: flow.runAs,
  steps: flow.operations.map((step) => ({ uid: ++uids, step })),
})

/** The PATCH body; runAs only when it changed (changing it needs system/automate:manage). */
const bodyOf = (draft: Draft, stored: FlowDetail) => ({
  ...(draft.runAs !== stored.runAs ? { runAs: draft.runAs } : {}),
  name: draft.name,
  triggerType: draft.triggerType,
  triggerConfig: draft.triggerConfig,
  options: draft.options,
  operations: draft.steps.map((s) => s.step),
})

/** What `$trigger` holds for each trigger type (docs/automation-triggers.md). */
function triggerVariables(type: TriggerType, config: Record<string, unknown>): string[] {
  const vars = ['{{$trigger.body}}']
  switch (type) {
    case 'manual': {
      const fields = Array.isArray(config.input_fields) ? (config.input_fields as { name?: unknown }[]) : []
      for (const f of fields) if (typeof f.name === 'string' && f.name) vars.push(`{{$trigger.body.input.${f.name}}}`)
      vars.push('{{$trigger.body.ids}}', '{{$trigger.body.collection}}')
      break
    }
    case 'webhook':
    case 'api_endpoint':
      vars.push('{{$trigger.body.<field>}}', '{{$trigger.method}}')
      break
    case 'event_action':
      vars.push('{{$trigger.event}}', '{{$trigger.collection}}', '{{$trigger.body.after}}', '{{$trigger.body.before}}')
      break
    case 'event_filter':
      vars.push('{{$trigger.event}}', '{{$trigger.collection}}', '{{$trigger.body.data}}', '{{$trigger.body.before}}')
      break
    case 'schedule':
      vars.push('{{$trigger.body.scheduledAt}}')
      break
    case 'app_event':
      vars.push('{{$trigger.event}}')
      break
    case 'another_flow':
      vars.push('{{$trigger.body.<field>}}', '{{$trigger.chain}}')
      break
  }
  return vars
}

const runVariables = ['{{$user.id}}', '{{$user.email}}', '{{$flow.id}}', '{{$run.id}}', '{{$now}}', '{{= <JSONata> }}']

/** Where each issue of a refusal belongs: a step's config field or setting, the trigger, or the flow. */
function spread(problem: FlowProblem | null) {
  const steps = new Map<number, { message: string; config: Record<string, string>; other: Record<string, string> }>()
  const trigger: Record<string, string> = {}
  const flow: Record<string, string> = {}
  if (!problem) return { steps, trigger, flow }
  const issues = problem.issues.length
    ? problem.issues
    : problem.path
      ? [{ path: problem.path, message: problem.message }]
      : []
  for (const issue of issues) {
    const at = locate(issue.path)
    if (!at) continue
    if (at.kind === 'step') {
      const entry = steps.get(at.index) ?? { message: problem.message, config: {}, other: {} }
      if (at.config !== null) entry.config[at.config] = issue.message
      else if (at.rest) entry.other[at.rest.replace(/^config$/, '')] = issue.message
      steps.set(at.index, entry)
    } else if (at.kind === 'trigger') trigger[at.config] = issue.message
    // Activating a schedule checks its published pattern and zone (details.field pattern or timezone).
    else if (at.field === 'pattern') trigger.cron = issue.message
    else if (at.field === 'timezone') trigger.timezone = issue.message
    else flow[at.field] = issue.message
  }
  return { steps, trigger, flow }
}

/** A schema loaded by a function (the trigger's, the options'), or null while loading or when absent. */
function useSchema(load: () => Promise<JsonSchema | null>, deps: unknown[]) {
  const [schema, setSchema] = useState<JsonSchema | null | undefined>(undefined)
  useEffect(() => {
    let live = true
    setSchema(undefined)
    load().then(
      (s) => live && setSchema(s),
      () => live && setSchema(null),
    )
    return () => {
      live = false
    }
  }, deps)
  return schema
}

/** /flows/:id: the trigger, the steps (forms generated from each operation's schema), dry run, publish, versions. */
export function FlowEditor(props: ScreenProps) {
  const id = props.params.id!
  const [flow, setFlow] = useState<FlowDetail | null>(null)
  const [draft, setDraft] = useState<Draft | null>(null)
  const [dirty, setDirty] = useState(false)
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null)
  const [problem, setProblem] = useState<FlowProblem | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [versions, setVersions] = useState<VersionSummary[]>([])
  const [catalog, setCatalog] = useState<OperationInfo[]>([])
  const [dryRun, setDryRun] = useState<{ result: DryRunResult; steps: Step[] } | null>(null)

  const loadVersions = () => flowsApi.versions(id).then(setVersions, (err) => setLoadProblem(problemOf(err)))
  useEffect(() => {
    flowsApi.get(id).then(
      (f) => {
        setFlow(f)
        setDraft(draftOf(f))
      },
      (err) => setLoadProblem(problemOf(err)),
    )
    void loadVersions()
    operationsCatalog().then(setCatalog, (err) => setLoadProblem(problemOf(err)))
  }, [id])

  const issues = useMemo(() => spread(problem), [problem])

  // Leaving the page (reload, closing the tab) with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return
    const warn = (e: BeforeUnloadEvent) => e.preventDefault()
    addEventListener('beforeunload', warn)
    return () => removeEventListener('beforeunload', warn)
  }, [dirty])

  if (!flow || !draft)
    return (
      <Page title="Flow">{loadProblem ? <ProblemNote problem={loadProblem} /> : <p role="status">Loading…</p>}</Page>
    )

  const change = (next: Draft) => {
    setDraft(next)
    setDirty(true)
    setNotice(null)
  }

  /** Saves the draft when it changed; false when the server refused it (the problem is shown). */
  const save = async (): Promise<boolean> => {
    if (!dirty) return true
    setProblem(null)
    try {
      const saved = await flowsApi.patch(id, bodyOf(draft, flow))
      setFlow(saved)
      setDirty(false)
      return true
    } catch (err) {
      setProblem(flowProblemOf(err))
      return false
    }
  }

  const act = async (work: () => Promise<void>) => {
    setBusy(true)
    setNotice(null)
    setProblem(null)
    try {
      await work()
    } catch (err) {
      setProblem(flowProblemOf(err))
    } finally {
      setBusy(false)
    }
  }

  const variablesFor = (index: number) => {
    const vars = triggerVariables(draft.triggerType, draft.triggerConfig)
    for (const { step } of draft.steps.slice(0, index)) {
      vars.push(`{{$steps.${step.key}}}`)
      const seen = dryRun?.result.steps.find((s) => s.key === step.key)?.output
      if (seen && typeof seen === 'object' && !Array.isArray(seen))
        for (const field of Object.keys(seen)) vars.push(`{{$steps.${step.key}.${field}}}`)
    }
    return [...vars, ...runVariables]
  }

  const setSteps = (steps: Draft['steps']) => change({ ...draft, steps })

  return (
    <Page
      title={`Flow: ${flow.name}`}
      actions={
        <>
          <Link to={`/flows/${id}/runs`} class="button">
            Runs
          </Link>
          <Button
            variant="primary"
            disabled={!dirty || busy || flow.system}
            onClick={() =>
              act(async () => {
                if (await save()) setNotice('Draft saved.')
              })
            }
          >
            Save draft
          </Button>
        </>
      }
    >
      <p class="flow-summary">
        <FlowStatus flow={flow} /> <span class="hint-inline">· {triggerLabel(flow.triggerType)} trigger</span>
        {dirty ? <span class="flow-unsaved"> · Unsaved changes</span> : null}
        {flow.publishedVersion !== null &&
        JSON.stringify(flow.operations) !== JSON.stringify(flow.publishedOperations) ? (
          <span class="hint-inline"> · The saved steps differ from v{flow.publishedVersion}: publish to run them.</span>
        ) : null}
      </p>
      {flow.system ? <p class="hint">A system flow: it can be paused, resumed and run, not edited.</p> : null}
      <div class="flow-status-bar">
        <div aria-live="polite">{notice ? <p class="flow-ok">{notice}</p> : null}</div>
        <ProblemNote problem={problem} />
        <ProblemNote problem={loadProblem} />
      </div>
      {flow.missingCredentials.length ? (
        <div class="card flow-warnings">
          <h2>Missing credentials</h2>
          <ul>
            {flow.missingCredentials.map((m) => (
              <li key={`${m.step}-${m.path}`}>
                {m.step ? `Step ${m.step}: ` : 'Trigger: '}
                <code>{m.path}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}

      <div class="flow-editor-grid">
        <div class="flow-editor-main">
          <section class="card" aria-labelledby="flow-general">
            <h2 id="flow-general">General</h2>
            <TextField
              label="Name"
              value={draft.name}
              maxLength={200}
              required
              error={issues.flow.name}
              onValue={(name) => change({ ...draft, name })}
            />
            <OptionsEditor
              value={draft.options}
              errors={prefixed(issues.flow, 'options.')}
              onChange={(options) => change({ ...draft, options })}
            />
            <RunAsField
              value={draft.runAs}
              error={issues.flow.runAs}
              onChange={(runAs) => change({ ...draft, runAs })}
            />
          </section>

          <TriggerEditor
            flow={flow}
            type={draft.triggerType}
            config={draft.triggerConfig}
            errors={issues.trigger}
            onChange={(triggerType, triggerConfig) => change({ ...draft, triggerType, triggerConfig })}
          />

          <section aria-labelledby="flow-steps" class="flow-steps">
            <h2 id="flow-steps">Steps</h2>
            {draft.steps.length === 0 ? <p class="empty">No steps yet: add the first one below.</p> : null}
            {draft.steps.map(({ uid, step }, index) => (
              <FlowStepCard
                key={uid}
                step={step}
                index={index}
                count={draft.steps.length}
                problem={issues.steps.get(index) ?? null}
                variables={variablesFor(index)}
                readOnly={flow.system}
                onChange={(next) => setSteps(draft.steps.map((s) => (s.uid === uid ? { uid, step: next } : s)))}
                onRemove={() => setSteps(draft.steps.filter((s) => s.uid !== uid))}
                onMove={(by) => {
                  const next = [...draft.steps]
                  const [moved] = next.splice(index, 1)
                  next.splice(index + by, 0, moved!)
                  setSteps(next)
                }}
              />
            ))}
            {flow.system ? null : (
              <AddStep
                catalog={catalog}
                taken={draft.steps.map((s) => s.step.key)}
                onAdd={(step) => setSteps([...draft.steps, { uid: ++uids, step }])}
              />
            )}
          </section>

          <DryRunCard
            triggerType={draft.triggerType}
            busy={busy}
            result={dryRun}
            onRun={(payload) =>
              act(async () => {
                if (!(await save())) return
                const steps = draft.steps.map((s) => s.step)
                const result = await client.flows.test(id, payload)
                setDryRun({ result, steps })
              })
            }
          />
        </div>

        <div class="flow-editor-side">
          <PublishCard
            flow={flow}
            busy={busy}
            versions={versions}
            onPublish={(summary) =>
              act(async () => {
                if (!(await save())) return
                const published = await flowsApi.publish(id, summary)
                setFlow(await flowsApi.get(id))
                await loadVersions()
                setNotice(
                  `Published version ${published.version}.${published.warnings.length ? ` ${published.warnings.length} warning(s) below.` : ''}`,
                )
              })
            }
            onStatus={(status) =>
              act(async () => {
                const next = await flowsApi.setStatus(id, status)
                setFlow({ ...flow, ...next })
                setNotice(
                  status === 'active'
                    ? 'The flow is active: its triggers run the published version.'
                    : 'The flow is paused.',
                )
              })
            }
            onRollback={(version) =>
              act(async () => {
                const rolled = await flowsApi.rollback(id, version)
                setFlow(rolled)
                setDraft(draftOf(rolled))
                setDirty(false)
                setProblem(null)
                await loadVersions()
                setNotice(`Rolled back to version ${version}: the draft and the published version are now its.`)
              })
            }
          />

          <RunCard
            flow={flow}
            busy={busy}
            onRun={(payload, manual) =>
              act(async () => {
                const started = manual
                  ? await flowsApi.trigger(id, manual)
                  : await client.flows.execute(id, payload === undefined ? {} : payload)
                navigate(`/flows/${id}/runs?run=${encodeURIComponent(started.runId)}`)
              })
            }
          />

          {flow.system ? null : (
            <DeleteFlow
              name={flow.name}
              busy={busy}
              onDuplicate={() =>
                act(async () => {
                  const copy = await flowsApi.duplicate(id)
                  navigate(`/flows/${copy.id}`)
                })
              }
              onDelete={() =>
                act(async () => {
                  await flowsApi.remove(id)
                  navigate('/flows')
                })
              }
            />
          )}
        </div>
      </div>
    </Page>
  )
}

function prefixed(errors: Record<string, string>, prefix: string): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors)
      .filter(([p]) => p.startsWith(prefix))
      .map(([p, m]) => [p.slice(prefix.length), m]),
  )
}

function OptionsEditor(props: {
  value: Record<string, unknown>
  errors: FieldErrors
  onChange: (v: Record<string, unknown>) => void
}) {
  const schema = useSchema(optionsSchema, [])
  return (
    <details class="flow-options" open={Object.keys(props.errors).length > 0}>
      <summary>Options: timeout, retries, concurrency, logging</summary>
      {schema ? (
        <SchemaForm schema={schema} value={props.value} errors={props.errors} onChange={props.onChange} />
      ) : schema === null ? (
        <JsonField
          label="Options (JSON)"
          value={props.value}
          onValue={(v) => props.onChange((v as Record<string, unknown>) ?? {})}
        />
      ) : (
        <p role="status">Loading…</p>
      )}
    </details>
  )
}

/** Whom runs act as: the starter (default), the flow's creator, or a role the caller may delegate to. */
function RunAsField(props: { value: string; error?: string | undefined; onChange: (runAs: string) => void }) {
  const [roles, setRoles] = useState<{ id: string; name: string; runAs: string }[]>([])
  useEffect(() => {
    flowsApi.assignableRoles().then(setRoles, () => setRoles([]))
  }, [])
  const options = [
    { value: 'triggering_user', label: 'Whoever starts it (never beyond the publisher)' },
    ...(roles.length ? [{ value: 'flow_owner', label: "The flow's creator" }] : []),
    ...roles.map((r) => ({ value: r.runAs, label: `Role: ${r.name}` })),
  ]
  if (!options.some((o) => o.value === props.value)) options.push({ value: props.value, label: props.value })
  return (
    <Field
      label="Runs act as"
      hint="A webhook run acts for nobody (the public role) unless it acts as a role or the creator. Choosing other than the first needs the manage permission."
      error={props.error}
    >
      {(id, describedBy) => (
        <select
          id={id}
          aria-describedby={describedBy}
          value={props.value}
          onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
        >
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

function TriggerEditor(props: {
  flow: FlowDetail
  type: TriggerType
  config: Record<string, unknown>
  errors: FieldErrors
  onChange: (type: TriggerType, config: Record<string, unknown>) => void
}) {
  const schema = useSchema(() => triggerSchema(props.type), [props.type])
  return (
    <section class="card" aria-labelledby="flow-trigger">
      <h2 id="flow-trigger">Trigger</h2>
      <Field label="Trigger type" hint="Changing it starts the trigger's settings afresh." error={props.errors['']}>
        {(id, describedBy) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={props.type}
            onChange={(e) => {
              const type = (e.currentTarget as HTMLSelectElement).value as TriggerType
              props.onChange(type, starterTriggerConfig(type))
            }}
          >
            {triggerTypes.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {props.flow.webhookEndpoint && props.type === 'webhook' ? (
        <p class="flow-endpoint">
          Webhook URL ({props.flow.webhookEndpoint.methods.join(', ')}): <code>{props.flow.webhookEndpoint.url}</code>
        </p>
      ) : null}
      {props.type === 'api_endpoint' ? (
        <p class="flow-endpoint">
          Endpoint: <code>{`${location.origin}/api/v1/automate/endpoint/${props.flow.id}`}</code>
        </p>
      ) : null}
      {schema ? (
        <SchemaForm
          schema={schema}
          value={props.config}
          errors={props.errors}
          onChange={(config) => props.onChange(props.type, config)}
        />
      ) : schema === null ? (
        <JsonField
          label="Trigger settings (JSON)"
          value={props.config}
          error={Object.values(props.errors).join('; ') || undefined}
          onValue={(v) => props.onChange(props.type, (v as Record<string, unknown>) ?? {})}
        />
      ) : (
        <p role="status">Loading the trigger's settings…</p>
      )}
    </section>
  )
}

function AddStep(props: { catalog: OperationInfo[]; taken: string[]; onAdd: (step: Step) => void }) {
  const [type, setType] = useState('')
  const categories = [...new Set(props.catalog.map((op) => op.category))]
  const chosen = props.catalog.find((op) => op.type === type)
  return (
    <form
      class="card flow-add"
      aria-labelledby="flow-add-title"
      onSubmit={(e) => {
        e.preventDefault()
        if (!type) return
        let key = type
        for (let n = 2; props.taken.includes(key); n++) key = `${type}_${n}`
        props.onAdd({ key, type, config: {} })
        setType('')
      }}
    >
      <h3 id="flow-add-title">Add a step</h3>
      <div class="inline">
        <Field label="Operation" hint={chosen?.description ?? 'Its settings form comes from the operation.'}>
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={type}
              onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">(choose an operation)</option>
              {categories.map((category) => (
                <optgroup key={category} label={category}>
                  {props.catalog
                    .filter((op) => op.category === category)
                    .map((op) => (
                      <option key={op.type} value={op.type}>
                        {op.name} ({op.type})
                      </option>
                    ))}
                </optgroup>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" class="button" disabled={!type}>
          Add step
        </button>
      </div>
    </form>
  )
}

/** A payload shaped as each trigger type's `$trigger.body`, to start a dry run from. */
function examplePayload(type: TriggerType): string {
  switch (type) {
    case 'manual':
      return '{"input": {"reason": "…"}, "ids": []}'
    case 'event_action':
      return '{"collection": "tasks", "after": {"id": "…", "title": "…"}, "before": null}'
    case 'event_filter':
      return '{"collection": "tasks", "action": "create", "data": {"title": "…"}, "before": null}'
    case 'schedule':
      return '{"scheduledAt": "2026-01-01T08:00:00.000Z"}'
    default:
      return '{"qty": 21}'
  }
}

function DryRunCard(props: {
  triggerType: TriggerType
  busy: boolean
  result: { result: DryRunResult; steps: Step[] } | null
  onRun: (payload: unknown) => void
}) {
  const [payload, setPayload] = useState<unknown>({})
  const r = props.result?.result
  return (
    <section class="card" aria-labelledby="flow-dry-run">
      <h2 id="flow-dry-run">Dry run</h2>
      <p class="hint">
        Runs the draft (saved first) with this payload as <code>$trigger.body</code>. Nothing is written: steps that
        write are skipped. It counts against the runs-per-hour quota.
      </p>
      <JsonField
        label="Trigger payload (JSON)"
        hint={`For this trigger, for example: ${examplePayload(props.triggerType)}`}
        value={payload}
        onValue={setPayload}
      />
      <Button disabled={props.busy} onClick={() => props.onRun(payload)}>
        Dry run
      </Button>
      {r ? (
        <div class="flow-trace" aria-label="Dry run result" role="region">
          <p>
            Result: <span class={`badge run-${r.status}`}>{r.status}</span>
            {r.error ? <span class="flow-errors"> {errorText(r.error)}</span> : null}
          </p>
          <StepTrace
            steps={r.steps.map((s) => ({
              key: s.key,
              type: s.type,
              status: s.status,
              input: props.result!.steps.find((d) => d.key === s.key)?.config,
              output: s.output,
              error: s.error,
              durationMs: s.durationMs,
              logs: (r.logs as { step?: string; message?: string; level?: string }[]).filter((l) => l.step === s.key),
            }))}
            inputLabel="Input (the step's config, before templates)"
          />
        </div>
      ) : null}
    </section>
  )
}

export function errorText(error: unknown): string {
  if (!error) return ''
  if (typeof error === 'string') return error
  if (typeof error === 'object') {
    const e = error as { code?: unknown; message?: unknown; step?: unknown }
    const parts = [typeof e.message === 'string' ? e.message : JSON.stringify(error)]
    if (typeof e.code === 'string') parts.push(`(${e.code}${typeof e.step === 'string' ? `, step ${e.step}` : ''})`)
    return parts.join(' ')
  }
  return String(error)
}

export interface TraceStep {
  key: string
  type: string
  status: string
  input: unknown
  output: unknown
  error: unknown
  durationMs: number | null
  attempts?: number
  logs: unknown[]
  unresolved?: unknown[]
}

/** Each step of a run or dry run: its status, input, output, error and log lines. */
export function StepTrace(props: { steps: TraceStep[]; inputLabel?: string }) {
  if (props.steps.length === 0) return <p class="empty">No step ran.</p>
  return (
    <ol class="flow-trace-steps">
      {props.steps.map((s) => (
        <li key={s.key} class="flow-trace-step">
          <p class="flow-trace-title">
            {s.key} <span class="badge">{s.type}</span> <span class={`badge run-${s.status}`}>{s.status}</span>{' '}
            <span class="hint-inline">
              {duration(s.durationMs)}
              {s.attempts && s.attempts > 1 ? ` · ${s.attempts} attempts` : ''}
            </span>
          </p>
          <div class="flow-io">
            <div>
              <p class="flow-io-label">{props.inputLabel ?? 'Input'}</p>
              <pre tabIndex={0} aria-label={`Input of ${s.key}`}>
                {pretty(s.input)}
              </pre>
            </div>
            <div>
              <p class="flow-io-label">Output</p>
              <pre tabIndex={0} aria-label={`Output of ${s.key}`}>
                {pretty(s.output)}
              </pre>
            </div>
          </div>
          {s.error ? <p class="flow-errors">Error: {errorText(s.error)}</p> : null}
          {s.logs.length || s.unresolved?.length ? (
            <ul class="flow-logs">
              {s.logs.map((l, i) => {
                const line = l as { level?: string; message?: string }
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: log lines have no identity
                  <li key={i}>
                    <span class="badge">{line.level ?? 'log'}</span> {line.message ?? JSON.stringify(l)}
                  </li>
                )
              })}
              {(s.unresolved ?? []).map((u, i) => {
                const miss = u as { path?: string; tag?: string; message?: string }
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: entries have no identity
                  <li key={`u${i}`}>
                    <span class="badge">unresolved</span> {miss.path ? `${miss.path}: ` : ''}
                    {miss.message ?? JSON.stringify(u)}
                  </li>
                )
              })}
            </ul>
          ) : null}
        </li>
      ))}
    </ol>
  )
}

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

function PublishCard(props: {
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

function RunCard(props: {
  flow: FlowDetail
  busy: boolean
  onRun: (payload: unknown, manual: { input: Record<string, unknown>; confirmed?: boolean } | null) => void
}) {
  const { flow } = props
  const [payload, setPayload] = useState<unknown>({})
  const [input, setInput] = useState<Record<string, string>>({})
  const [confirmed, setConfirmed] = useState(false)
  const manual = flow.triggerType === 'manual'
  const fields =
    manual && Array.isArray(flow.triggerConfig.input_fields)
      ? (flow.triggerConfig.input_fields as { name: string; label?: string; required?: boolean }[])
      : []
  const confirm = manual ? flow.triggerConfig.confirm : false
  const active = flow.status === 'active'
  return (
    <section class="card" aria-labelledby="flow-run">
      <h2 id="flow-run">Run now</h2>
      <p class="hint">
        {active
          ? manual
            ? 'Starts a run of the published version through the manual trigger.'
            : 'Starts a run of the published version with this payload as $trigger.body.'
          : 'Only an active flow runs: publish it and activate it first.'}
      </p>
      {manual ? (
        <>
          {fields.map((f) => (
            <TextField
              key={f.name}
              label={`${f.label || f.name}${f.required ? ' (required)' : ''}`}
              value={input[f.name] ?? ''}
              onValue={(v) => setInput({ ...input, [f.name]: v })}
            />
          ))}
          {confirm ? (
            <label class="schema-check">
              <input
                type="checkbox"
                checked={confirmed}
                onChange={(e) => setConfirmed((e.currentTarget as HTMLInputElement).checked)}
              />{' '}
              {typeof confirm === 'object' && confirm && 'message' in confirm
                ? String((confirm as { message: unknown }).message)
                : 'I confirm this run'}
            </label>
          ) : null}
        </>
      ) : (
        <JsonField label="Run payload (JSON)" value={payload} onValue={setPayload} />
      )}
      <Button
        variant="primary"
        disabled={props.busy || !active}
        onClick={() =>
          props.onRun(
            payload,
            manual
              ? {
                  input: Object.fromEntries(Object.entries(input).filter(([, v]) => v !== '')),
                  ...(confirm ? { confirmed } : {}),
                }
              : null,
          )
        }
      >
        Run now
      </Button>
    </section>
  )
}

function DeleteFlow(props: { name: string; busy: boolean; onDuplicate: () => void; onDelete: () => void }) {
  const [open, setOpen] = useState(false)
  return (
    <section class="card" aria-labelledby="flow-delete">
      <h2 id="flow-delete">Copy or delete</h2>
      <p class="hint">A copy starts as a draft with the saved steps, named "{props.name} (copy)".</p>
      <div class="inline">
        <Button disabled={props.busy} onClick={props.onDuplicate}>
          Duplicate
        </Button>
        <Button variant="danger" disabled={props.busy} onClick={() => setOpen(true)}>
          Delete this flow
        </Button>
      </div>
      {open ? (
        <Dialog title={`Delete ${props.name}?`} onClose={() => setOpen(false)}>
          <p>Its versions, runs and step logs go with it, and its webhook stops answering.</p>
          <div class="inline">
            <Button
              variant="danger"
              onClick={() => {
                setOpen(false)
                props.onDelete()
              }}
            >
              Delete
            </Button>
            <Button onClick={() => setOpen(false)}>Cancel</Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  )
}
