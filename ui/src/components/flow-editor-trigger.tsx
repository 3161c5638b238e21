import { useEffect, useState } from 'preact/hooks'
import { starterTriggerConfig, triggerSchema, triggerTypes, type FlowDetail, type TriggerType } from './flow-api.js'
import { Field } from './form.js'
import { JsonField, SchemaForm, type FieldErrors, type JsonSchema } from './schema-form.js'

/** A schema loaded by a function (the trigger's, the options'), or null while loading or when absent. */
export function useSchema(load: () => Promise<JsonSchema | null>, deps: unknown[]) {
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

export function TriggerEditor(props: {
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
