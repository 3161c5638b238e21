import { useEffect, useState } from 'preact/hooks'
import { problemOf, type Problem } from '../api.js'
import { operationSchema, type OperationSchema, type Step } from './flow-api.js'
import { Button, Field, ProblemNote } from './form.js'
import { JsonField, SchemaForm, type FieldErrors, type JsonSchema } from './schema-form.js'

/** The settings every step has besides its config (automation spec, "Step settings"). */
const settingsSchema: JsonSchema = {
  type: 'object',
  properties: {
    onError: {
      type: 'string',
      enum: ['stop', 'continue', 'retry', 'fallback'],
      default: 'stop',
      description:
        'When the step fails: stop the run, continue with the next step, retry it, or use the fallback value',
    },
    retryConfig: {
      type: 'object',
      description: 'With retry',
      properties: {
        maxAttempts: { type: 'integer', minimum: 1, maximum: 10, default: 3, description: 'Attempts in all' },
        delayMs: {
          type: 'integer',
          minimum: 0,
          maximum: 60000,
          default: 1000,
          description: 'Milliseconds between attempts',
        },
        backoff: { type: 'string', enum: ['fixed', 'exponential'], default: 'fixed' },
      },
    },
    fallbackValue: { description: "With fallback: the step's output when it fails" },
    condition: {
      type: 'object',
      description:
        'A rule tree; the step is skipped when it does not hold, e.g. { "field": "$trigger.body.total", "operator": "gt", "value": 0 }',
    },
  },
}

/** An operation's schema, loaded once per type. */
export function useOperationSchema(type: string) {
  const [state, setState] = useState<{ schema: OperationSchema | null; problem: Problem | null }>({
    schema: null,
    problem: null,
  })
  useEffect(() => {
    let live = true
    setState({ schema: null, problem: null })
    operationSchema(type).then(
      (schema) => live && setState({ schema, problem: null }),
      (err) => live && setState({ schema: null, problem: problemOf(err) }),
    )
    return () => {
      live = false
    }
  }, [type])
  return state
}

/**
 * One step of the flow editor: its key, its config as a form generated from the operation's JSON Schema
 * (or as JSON), its settings, the template variables it may use, and moving or removing it.
 */
export function FlowStepCard(props: {
  step: Step
  index: number
  count: number
  /** The server's message for this step, and the config paths and other paths it named. */
  problem: { message: string; config: FieldErrors; other: FieldErrors } | null
  variables: readonly string[]
  readOnly?: boolean
  onChange: (step: Step) => void
  onMove: (by: -1 | 1) => void
  onRemove: () => void
}) {
  const { step, index } = props
  const { schema, problem } = useOperationSchema(step.type)
  const [asJson, setAsJson] = useState(false)
  const listId = `step-vars-${index}`
  const headingId = `step-heading-${index}`
  const { config: _c, key: _k, type: _t, ...settings } = step
  const settingErrors = props.problem?.other ?? {}
  return (
    <section class="card flow-step" aria-labelledby={headingId}>
      <header class="flow-step-header">
        <h3 id={headingId}>
          <span class="flow-step-number">{index + 1}.</span> {step.key}{' '}
          <span class="badge">{schema?.name ?? step.type}</span>
        </h3>
        {props.readOnly ? null : (
          <div class="flow-step-actions">
            <Button aria-label={`Move step ${step.key} up`} disabled={index === 0} onClick={() => props.onMove(-1)}>
              ↑
            </Button>
            <Button
              aria-label={`Move step ${step.key} down`}
              disabled={index === props.count - 1}
              onClick={() => props.onMove(1)}
            >
              ↓
            </Button>
            <Button variant="danger" aria-label={`Remove step ${step.key}`} onClick={props.onRemove}>
              Remove
            </Button>
          </div>
        )}
      </header>
      {schema?.description ? <p class="hint">{schema.description}</p> : null}
      {/* The page's alert announces the refusal; here it is repeated beside the step it concerns. */}
      {props.problem ? <p class="field-error flow-step-problem">{props.problem.message}</p> : null}
      <ProblemNote problem={problem} />
      <Field
        label="Step key"
        hint="Unique in the flow; later steps read this step's output as $steps.<key>."
        error={settingErrors.key}
      >
        {(id, describedBy) => (
          <input
            id={id}
            type="text"
            value={step.key}
            pattern="[A-Za-z_][\w\-]{0,99}"
            aria-describedby={describedBy}
            aria-invalid={settingErrors.key ? true : undefined}
            onInput={(e) => props.onChange({ ...step, key: (e.currentTarget as HTMLInputElement).value })}
          />
        )}
      </Field>
      <div class="flow-step-config">
        <div class="flow-step-config-head">
          <h4>Configuration</h4>
          <Button aria-pressed={asJson} onClick={() => setAsJson(!asJson)}>
            {asJson ? 'Edit as a form' : 'Edit as JSON'}
          </Button>
        </div>
        {asJson || (!schema && problem) ? (
          <JsonField
            label={`Configuration of ${step.key} (JSON)`}
            value={step.config}
            rows={8}
            error={Object.entries(props.problem?.config ?? {})
              .map(([p, m]) => (p ? `${p}: ${m}` : m))
              .join('; ')}
            onValue={(v) =>
              props.onChange({ ...step, config: v && typeof v === 'object' ? (v as Record<string, unknown>) : {} })
            }
          />
        ) : schema ? (
          <SchemaForm
            schema={schema.schema}
            value={step.config}
            errors={props.problem?.config}
            suggestions={listId}
            onChange={(config) => props.onChange({ ...step, config })}
          />
        ) : (
          <p role="status">Loading the form…</p>
        )}
      </div>
      <datalist id={listId}>
        {props.variables.map((v) => (
          <option key={v} value={v} />
        ))}
      </datalist>
      <details class="flow-vars">
        <summary>Template variables for this step</summary>
        <p class="hint">
          Any text value may hold these; a value that is exactly one of them keeps its type. Text inputs offer them as
          suggestions.
        </p>
        <ul>
          {props.variables.map((v) => (
            <li key={v}>
              <code>{v}</code>
            </li>
          ))}
        </ul>
      </details>
      <details class="flow-step-settings">
        <summary>On error, retries and condition</summary>
        <SchemaForm
          schema={settingsSchema}
          value={settings as Record<string, unknown>}
          errors={settingErrors}
          onChange={(next) => props.onChange({ key: step.key, type: step.type, config: step.config, ...next } as Step)}
        />
      </details>
    </section>
  )
}
