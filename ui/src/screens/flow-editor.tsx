import type { DryRunResult } from '@plinth/client'
import { useEffect, useMemo, useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import {
  flowProblemOf,
  flowsApi,
  operationsCatalog,
  triggerLabel,
  type FlowDetail,
  type FlowProblem,
  type OperationInfo,
  type Step,
  type VersionSummary,
} from '../components/flow-api.js'
import { DeleteFlow } from '../components/flow-editor-delete.js'
import {
  bodyOf,
  draftOf,
  nextUid,
  prefixed,
  runVariables,
  spread,
  triggerVariables,
  type Draft,
} from '../components/flow-editor-draft.js'
import { DryRunCard } from '../components/flow-editor-dry-run.js'
import { OptionsEditor, RunAsField } from '../components/flow-editor-general.js'
import { PublishCard } from '../components/flow-editor-publish.js'
import { RunCard } from '../components/flow-editor-run-now.js'
import { AddStep } from '../components/flow-editor-steps.js'
import { TriggerEditor } from '../components/flow-editor-trigger.js'
import { FlowStepCard } from '../components/flow-step.js'
import { Button, ProblemNote, TextField } from '../components/form.js'
import { Page } from '../components/page.js'
import { Link, navigate } from '../router.js'
import type { ScreenProps } from '../screen-props.js'
import { FlowStatus } from './flows.js'
import './flows.css'

// The run history screen (flow-runs.tsx) shows its steps with these.
export { errorText, StepTrace, type TraceStep } from '../components/flow-editor-trace.js'

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
                onAdd={(step) => setSteps([...draft.steps, { uid: nextUid(), step }])}
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
