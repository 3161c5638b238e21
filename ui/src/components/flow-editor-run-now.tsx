import { useState } from 'preact/hooks'
import type { FlowDetail } from './flow-api.js'
import { Button, TextField } from './form.js'
import { JsonField } from './schema-form.js'

export function RunCard(props: {
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
