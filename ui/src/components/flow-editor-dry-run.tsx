import type { DryRunResult } from '@plinth/client'
import { useState } from 'preact/hooks'
import type { Step, TriggerType } from './flow-api.js'
import { errorText, StepTrace } from './flow-editor-trace.js'
import { Button } from './form.js'
import { JsonField } from './schema-form.js'

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

export function DryRunCard(props: {
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
              input: s.input ?? props.result!.steps.find((d) => d.key === s.key)?.config,
              output: s.output,
              error: s.error,
              durationMs: s.durationMs,
              logs: (r.logs as { step?: string; message?: string; level?: string }[]).filter((l) => l.step === s.key),
            }))}
            inputLabel="Input (the step's config, templates applied)"
          />
        </div>
      ) : null}
    </section>
  )
}
