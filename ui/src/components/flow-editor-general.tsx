import { useEffect, useState } from 'preact/hooks'
import { flowsApi, optionsSchema } from './flow-api.js'
import { useSchema } from './flow-editor-trigger.js'
import { Field } from './form.js'
import { JsonField, SchemaForm, type FieldErrors } from './schema-form.js'

export function OptionsEditor(props: {
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
export function RunAsField(props: { value: string; error?: string | undefined; onChange: (runAs: string) => void }) {
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
