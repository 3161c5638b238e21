import { Field } from './form.js'
import { AnyField, Checkbox, Group, JsonField } from './schema-form-inputs.js'
import { ListField, MapField } from './schema-form-lists.js'
import {
  child,
  discriminatorOf,
  errorsUnder,
  hintOf,
  isRecord,
  kindOf,
  shown,
  toNumberish,
  type Ctx,
  type FieldErrors,
  type FieldProps,
  type JsonSchema,
  type Labelled,
} from './schema-form-schema.js'
import '../screens/flows.css'

export { JsonField } from './schema-form-inputs.js'
export type { FieldErrors, JsonSchema } from './schema-form-schema.js'

/**
 * A form generated from a JSON Schema: strings, numbers and integers (which also take a template), booleans,
 * enums, objects, lists of values, of choices and of objects, and oneOf variants told apart by a constant;
 * anything it cannot render becomes a JSON text area. Descriptions, defaults and bounds are the hints;
 * required fields say so; `errors` put the server's message under the field it names.
 */
export function SchemaForm(props: {
  schema: JsonSchema
  value: Record<string, unknown>
  onChange: (value: Record<string, unknown>) => void
  errors?: FieldErrors
  suggestions?: string | undefined
}) {
  const ctx: Ctx = { errors: props.errors ?? {}, suggestions: props.suggestions }
  const { schema } = props
  if (kindOf(schema, 0) !== 'object') {
    if (schema.type === 'object' && schema.properties && Object.keys(schema.properties).length === 0)
      return <p class="hint">Nothing to configure.</p>
    return (
      <JsonField
        label="Configuration (JSON)"
        hint={hintOf(schema)}
        value={props.value}
        error={errorsUnder(ctx.errors, '')}
        onValue={(v) => props.onChange((v as Record<string, unknown>) ?? {})}
      />
    )
  }
  return (
    <div class="schema-form">
      <ObjectFields schema={schema} value={props.value} path="" depth={0} ctx={ctx} onChange={props.onChange} />
    </div>
  )
}

function ObjectFields(props: {
  schema: JsonSchema
  value: Record<string, unknown>
  path: string
  depth: number
  ctx: Ctx
  onChange: (value: Record<string, unknown>) => void
  skip?: string
}) {
  const required = new Set(props.schema.required ?? [])
  return (
    <>
      {Object.entries(props.schema.properties ?? {})
        .filter(([name]) => name !== props.skip)
        .map(([name, prop]) => (
          <SchemaField
            key={name}
            name={name}
            schema={prop}
            required={required.has(name)}
            value={props.value[name]}
            path={child(props.path, name)}
            depth={props.depth}
            ctx={props.ctx}
            onChange={(v) => {
              const next = { ...props.value }
              if (v === undefined) delete next[name]
              else next[name] = v
              props.onChange(next)
            }}
          />
        ))}
    </>
  )
}

function SchemaField(props: FieldProps) {
  const { schema, ctx, path } = props
  const kind = kindOf(schema, props.depth)
  const label = props.required ? `${props.name} (required)` : props.name
  const hint = hintOf(schema)
  const error = kind === 'json' || kind === 'any' ? errorsUnder(ctx.errors, path) : ctx.errors[path]
  switch (kind) {
    case 'const':
      return (
        <p class="schema-const">
          <span class="schema-const-name">{props.name}</span>: <code>{JSON.stringify(schema.const)}</code>
        </p>
      )
    case 'enum': {
      const options = schema.enum ?? []
      const index = options.findIndex((o) => o === props.value)
      const foreign = props.value !== undefined && index < 0
      return (
        <Field label={label} hint={hint} error={error}>
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              aria-invalid={error ? true : undefined}
              aria-required={props.required || undefined}
              value={foreign ? 'foreign' : index < 0 ? '' : String(index)}
              onChange={(e) => {
                const v = (e.currentTarget as HTMLSelectElement).value
                if (v === 'foreign') return
                props.onChange(v === '' ? undefined : options[Number(v)])
              }}
            >
              {!props.required || index < 0 ? (
                <option value="">
                  {schema.default !== undefined ? `(default: ${shown(schema.default)})` : '(choose)'}
                </option>
              ) : null}
              {foreign ? <option value="foreign">{shown(props.value)}</option> : null}
              {options.map((o, i) => (
                <option key={String(o)} value={String(i)}>
                  {shown(o)}
                </option>
              ))}
            </select>
          )}
        </Field>
      )
    }
    case 'text':
    case 'number': {
      if (props.value !== undefined && typeof props.value === 'object')
        return <JsonField label={label} hint={hint} value={props.value} error={error} onValue={props.onChange} />
      const long = kind === 'text' && (schema.maxLength === undefined || schema.maxLength > 500)
      const common = {
        'aria-invalid': error ? true : undefined,
        'aria-required': props.required || undefined,
        value: shown(props.value),
      }
      const convert = (text: string) =>
        kind === 'number' ? toNumberish(text) : text === '' && !props.required ? undefined : text
      const numberHint = kind === 'number' ? [hint, 'A number, or a template.'].filter(Boolean).join(' ') : hint
      return (
        <Field label={label} hint={numberHint} error={error}>
          {(id, describedBy) =>
            long ? (
              <textarea
                {...common}
                id={id}
                class="schema-text"
                rows={2}
                aria-describedby={describedBy}
                onInput={(e) => props.onChange(convert((e.currentTarget as HTMLTextAreaElement).value))}
              />
            ) : (
              <input
                {...common}
                id={id}
                type="text"
                inputMode={kind === 'number' ? 'decimal' : undefined}
                list={ctx.suggestions}
                autoComplete="off"
                spellcheck={false}
                aria-describedby={describedBy}
                placeholder={schema.default !== undefined ? shown(schema.default) : undefined}
                onInput={(e) => props.onChange(convert((e.currentTarget as HTMLInputElement).value))}
              />
            )
          }
        </Field>
      )
    }
    case 'boolean': {
      if (props.value !== undefined && typeof props.value !== 'boolean')
        return <JsonField label={label} hint={hint} value={props.value} error={error} onValue={props.onChange} />
      const checked = (props.value ?? schema.default ?? false) === true
      return <Checkbox label={props.name} hint={hint} error={error} checked={checked} onChange={props.onChange} />
    }
    case 'object': {
      const value = isRecord(props.value) ? props.value : {}
      return (
        <Group legend={label} hint={hint} error={error}>
          <ObjectFields
            schema={schema}
            value={value}
            path={path}
            depth={props.depth + 1}
            ctx={ctx}
            onChange={(v) => props.onChange(Object.keys(v).length === 0 && !props.required ? undefined : v)}
          />
        </Group>
      )
    }
    case 'multi': {
      const chosen = Array.isArray(props.value) ? (props.value as unknown[]) : []
      const all = (schema.items?.enum ?? []) as string[]
      return (
        <Group legend={label} hint={hint} error={error} class="schema-choices">
          {all.map((option) => (
            <Checkbox
              key={option}
              label={option}
              checked={chosen.includes(option)}
              onChange={(on) => {
                const next = on
                  ? all.filter((o) => o === option || chosen.includes(o))
                  : chosen.filter((o) => o !== option)
                props.onChange(next.length === 0 && !props.required && !schema.minItems ? undefined : next)
              }}
            />
          ))}
        </Group>
      )
    }
    case 'list':
      return <ListField {...props} label={label} hint={hint} error={error} />
    case 'map':
      return <MapField {...props} label={label} hint={hint} error={errorsUnder(ctx.errors, path)} />
    case 'objects':
      return <ObjectListField {...props} label={label} hint={hint} error={error} />
    case 'variant':
      return <VariantField {...props} label={label} hint={hint} error={error} />
    case 'any':
      return <AnyField label={label} hint={hint} value={props.value} error={error} onValue={props.onChange} ctx={ctx} />
    default:
      return <JsonField label={label} hint={hint} value={props.value} error={error} onValue={props.onChange} />
  }
}

/** A list of objects: a small form each, add and remove. */
function ObjectListField(props: Labelled) {
  const items = Array.isArray(props.value) ? (props.value as unknown[]) : []
  const itemSchema = props.schema.items ?? {}
  const set = (next: unknown[]) => props.onChange(next.length === 0 && !props.required ? undefined : next)
  return (
    <Group legend={props.label} hint={props.hint} error={props.error} class="schema-list">
      {items.map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: items have no identity but their place
        <fieldset class="schema-group schema-item" key={i}>
          <legend>{`${props.name} ${i + 1}`}</legend>
          <ObjectFields
            schema={itemSchema}
            value={isRecord(item) ? item : {}}
            path={`${props.path}[${i}]`}
            depth={props.depth + 2}
            ctx={props.ctx}
            onChange={(v) => {
              const next = [...items]
              next[i] = v
              set(next)
            }}
          />
          <button
            type="button"
            class="button button-plain"
            aria-label={`Remove ${props.name} ${i + 1}`}
            onClick={() => set(items.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        class="button button-plain"
        disabled={props.schema.maxItems !== undefined && items.length >= props.schema.maxItems}
        onClick={() => set([...items, {}])}
      >
        Add to {props.name}
      </button>
    </Group>
  )
}

/** One of several object shapes, told apart by a constant (http_request's auth: bearer, basic, api_key). */
function VariantField(props: Labelled) {
  const variants = (props.schema.oneOf ?? props.schema.anyOf ?? []) as JsonSchema[]
  const tag = discriminatorOf(variants)!
  const value = isRecord(props.value) ? props.value : undefined
  const current = variants.findIndex((v) => value && v.properties?.[tag]?.const === value[tag])
  const chosen = current >= 0 ? variants[current] : undefined
  return (
    <Group legend={props.label} hint={props.hint} error={props.error}>
      <Field label={tag}>
        {(id) => (
          <select
            id={id}
            value={current < 0 ? '' : String(current)}
            onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value
              if (v === '') props.onChange(undefined)
              else props.onChange({ [tag]: variants[Number(v)]!.properties![tag]!.const })
            }}
          >
            <option value="">(none)</option>
            {variants.map((v, i) => (
              <option key={String(v.properties?.[tag]?.const)} value={String(i)}>
                {shown(v.properties?.[tag]?.const)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {chosen && value ? (
        <ObjectFields
          schema={chosen}
          value={value}
          path={props.path}
          depth={props.depth + 1}
          ctx={props.ctx}
          skip={tag}
          onChange={(v) => props.onChange({ ...v, [tag]: value[tag] })}
        />
      ) : null}
    </Group>
  )
}
