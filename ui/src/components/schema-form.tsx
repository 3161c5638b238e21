import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { Field } from './form.js'
import '../screens/flows.css'

/** The part of JSON Schema (draft 2020-12, as the server writes it) the form reads. */
export interface JsonSchema {
  type?: string | string[]
  title?: string
  description?: string
  default?: unknown
  const?: unknown
  enum?: unknown[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  pattern?: string
  $ref?: string
}

type Kind =
  | 'map'
  | 'const'
  | 'enum'
  | 'text'
  | 'number'
  | 'boolean'
  | 'object'
  | 'multi'
  | 'list'
  | 'objects'
  | 'variant'
  | 'any'
  | 'json'

/** Config paths (`message`, `auth.token`, `values[1]`) → the message the server gave for them. */
export type FieldErrors = Readonly<Record<string, string>>

const typeOf = (s: JsonSchema): string | undefined =>
  Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type

const isScalar = (s: JsonSchema) => ['string', 'number', 'integer'].includes(typeOf(s) ?? '') && !s.enum

/** The property of every variant holding a `const`: how a oneOf of objects says which one it is. */
function discriminatorOf(variants: JsonSchema[]): string | null {
  const first = variants[0]?.properties
  if (!first) return null
  for (const [name, prop] of Object.entries(first)) {
    if (prop.const === undefined) continue
    if (variants.every((v) => v.properties?.[name]?.const !== undefined)) return name
  }
  return null
}

function kindOf(s: JsonSchema, depth: number): Kind {
  if (s.$ref) return 'json'
  if (s.const !== undefined) return 'const'
  if (s.enum) return 'enum'
  const variants = s.oneOf ?? s.anyOf
  if (variants) {
    if (variants.every((v) => typeOf(v) === 'object' && v.properties) && discriminatorOf(variants) && depth < 3)
      return 'variant'
    if (variants.every(isScalar)) return variants.some((v) => typeOf(v) === 'string') ? 'text' : 'number'
    return 'json'
  }
  switch (typeOf(s)) {
    case 'string':
      return 'text'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'object': {
      if (s.properties && Object.keys(s.properties).length > 0) return depth < 3 ? 'object' : 'json'
      const extra = s.additionalProperties
      if (!s.properties && typeof extra === 'object' && isScalar(extra)) return 'map'
      return 'json'
    }
    case 'array': {
      const items = s.items
      if (!items) return 'json'
      if (items.enum && items.enum.every((v) => typeof v === 'string')) return 'multi'
      if (isScalar(items) || (items.anyOf ?? items.oneOf)?.every(isScalar)) return 'list'
      if (typeOf(items) === 'object' && items.properties && depth < 2) return 'objects'
      return 'json'
    }
    case undefined:
      return 'any'
    default:
      return 'json'
  }
}

/** What a person reads under a field: its description, its default and its bounds. */
function hintOf(s: JsonSchema): string | undefined {
  const parts: string[] = []
  if (s.description) parts.push(s.description.endsWith('.') ? s.description : `${s.description}.`)
  if (s.default !== undefined && !(Array.isArray(s.default) && s.default.length === 0))
    parts.push(`Default: ${JSON.stringify(s.default)}.`)
  const t = typeOf(s)
  if ((t === 'number' || t === 'integer') && (s.minimum !== undefined || s.maximum !== undefined))
    parts.push(`From ${s.minimum ?? '−∞'} to ${s.maximum ?? '∞'}.`)
  return parts.length ? parts.join(' ') : undefined
}

const numeric = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/

/** Text typed into a number field: a number when it spells one, else the text (a template such as {{$steps.a.n}}). */
function toNumberish(text: string): unknown {
  const t = text.trim()
  if (t === '') return undefined
  return numeric.test(t) ? Number(t) : text
}

/** Text typed into a field of any type: JSON when it parses, else the text itself (templates are text). */
function toAny(text: string): unknown {
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const shown = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value)

const child = (path: string, name: string) => (path ? `${path}.${name}` : name)

/** The errors at a path or under it (for fields that show a whole value as JSON). */
function errorsUnder(errors: FieldErrors, path: string): string | undefined {
  const found = Object.entries(errors).filter(
    ([p]) => p === path || path === '' || p.startsWith(`${path}.`) || p.startsWith(`${path}[`),
  )
  if (found.length === 0) return undefined
  return found.map(([p, m]) => (p === path ? m : `${p}: ${m}`)).join('; ')
}

interface Ctx {
  errors: FieldErrors
  /** The id of a <datalist> of template variables offered by text inputs. */
  suggestions?: string | undefined
}

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

interface FieldProps {
  name: string
  schema: JsonSchema
  required: boolean
  value: unknown
  path: string
  depth: number
  ctx: Ctx
  onChange: (value: unknown) => void
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

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function Group(props: {
  legend: string
  hint?: string | undefined
  error?: string | undefined
  class?: string
  children: preact.ComponentChildren
}) {
  const id = useId()
  return (
    <fieldset
      class={`schema-group ${props.class ?? ''} ${props.error ? 'field-invalid' : ''}`.trim()}
      aria-describedby={props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined}
    >
      <legend>{props.legend}</legend>
      {props.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.children}
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </fieldset>
  )
}

function Checkbox(props: {
  label: string
  hint?: string | undefined
  error?: string | undefined
  checked: boolean
  onChange: (checked: boolean) => void
}) {
  const id = useId()
  const describedBy = props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined
  return (
    <div class={props.error ? 'schema-check field-invalid' : 'schema-check'}>
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        aria-describedby={describedBy}
        aria-invalid={props.error ? true : undefined}
        onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && !props.error ? (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  )
}

type Labelled = FieldProps & { label: string; hint?: string | undefined; error?: string | undefined }

/** A list of values: one input each, add and remove. */
function ListField(props: Labelled) {
  const items = Array.isArray(props.value) ? (props.value as unknown[]) : []
  const itemSchema = props.schema.items ?? {}
  const numbers = kindOf(itemSchema, 0) === 'number'
  const set = (next: unknown[]) => props.onChange(next.length === 0 && !props.required ? undefined : next)
  return (
    <Group legend={props.label} hint={props.hint} error={props.error} class="schema-list">
      {items.map((item, i) => {
        const itemError = props.ctx.errors[`${props.path}[${i}]`]
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: items have no identity but their place
          <div class="schema-list-item" key={i}>
            <input
              aria-label={`${props.name} ${i + 1}`}
              type="text"
              list={props.ctx.suggestions}
              autoComplete="off"
              aria-invalid={itemError ? true : undefined}
              value={shown(item)}
              onInput={(e) => {
                const text = (e.currentTarget as HTMLInputElement).value
                const next = [...items]
                next[i] = numbers ? (toNumberish(text) ?? '') : text
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
            {itemError ? <p class="field-error">{itemError}</p> : null}
          </div>
        )
      })}
      <button
        type="button"
        class="button button-plain"
        disabled={props.schema.maxItems !== undefined && items.length >= props.schema.maxItems}
        onClick={() => set([...items, ''])}
      >
        Add to {props.name}
      </button>
    </Group>
  )
}

/** An object of names to values (http_request's headers): a name and a value per row, add and remove. */
function MapField(props: Labelled) {
  const entries = isRecord(props.value) ? Object.entries(props.value) : []
  // Rows keep their place while a name is being typed (an object cannot hold two empty names).
  const [rows, setRows] = useState<[string, string][]>(() => entries.map(([k, v]) => [k, shown(v)]))
  const last = useRef(props.value)
  useEffect(() => {
    if (JSON.stringify(props.value) !== JSON.stringify(last.current)) {
      last.current = props.value
      setRows(isRecord(props.value) ? Object.entries(props.value).map(([k, v]) => [k, shown(v)]) : [])
    }
  }, [props.value])
  const set = (next: [string, string][]) => {
    setRows(next)
    const named = next.filter(([k]) => k !== '')
    const value = named.length === 0 && !props.required ? undefined : Object.fromEntries(named)
    last.current = value
    props.onChange(value)
  }
  return (
    <Group legend={props.label} hint={props.hint} error={props.error} class="schema-list">
      {rows.map(([name, value], i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
        <div class="schema-list-item" key={i}>
          <input
            type="text"
            aria-label={`${props.name} ${i + 1} name`}
            placeholder="name"
            autoComplete="off"
            value={name}
            onInput={(e) =>
              set(rows.map((r, j) => (j === i ? [(e.currentTarget as HTMLInputElement).value, r[1]] : r)))
            }
          />
          <input
            type="text"
            aria-label={`${props.name} ${i + 1} value`}
            placeholder="value"
            list={props.ctx.suggestions}
            autoComplete="off"
            value={value}
            onInput={(e) =>
              set(rows.map((r, j) => (j === i ? [r[0], (e.currentTarget as HTMLInputElement).value] : r)))
            }
          />
          <button
            type="button"
            class="button button-plain"
            aria-label={`Remove ${props.name} ${i + 1}`}
            onClick={() => set(rows.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="button button-plain" onClick={() => setRows([...rows, ['', '']])}>
        Add to {props.name}
      </button>
    </Group>
  )
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

/** A value of any type: JSON when it parses, else text (a template). */
function AnyField(props: {
  label: string
  hint?: string | undefined
  value: unknown
  error?: string | undefined
  onValue: (value: unknown) => void
  ctx: Ctx
}) {
  const [text, setText] = useState(() => (typeof props.value === 'string' ? props.value : shown(props.value)))
  const last = useRef(props.value)
  useEffect(() => {
    if (JSON.stringify(props.value) !== JSON.stringify(last.current)) {
      last.current = props.value
      setText(typeof props.value === 'string' ? props.value : shown(props.value))
    }
  }, [props.value])
  const hint = [props.hint, 'JSON (42, true, {"a": 1}), or text such as a template.'].filter(Boolean).join(' ')
  return (
    <Field label={props.label} hint={hint} error={props.error}>
      {(id, describedBy) => (
        <input
          id={id}
          type="text"
          list={props.ctx.suggestions}
          autoComplete="off"
          spellcheck={false}
          aria-describedby={describedBy}
          aria-invalid={props.error ? true : undefined}
          value={text}
          onInput={(e) => {
            const t = (e.currentTarget as HTMLInputElement).value
            setText(t)
            const v = toAny(t)
            last.current = v
            props.onValue(v)
          }}
        />
      )}
    </Field>
  )
}

/** The fallback: the value as JSON text, kept as typed until it parses. */
export function JsonField(props: {
  label: string
  hint?: string | undefined
  value: unknown
  error?: string | undefined
  onValue: (value: unknown) => void
  rows?: number
}) {
  const [text, setText] = useState(() => (props.value === undefined ? '' : JSON.stringify(props.value, null, 2)))
  const [invalid, setInvalid] = useState<string | null>(null)
  const last = useRef(props.value)
  useEffect(() => {
    if (JSON.stringify(props.value) !== JSON.stringify(last.current)) {
      last.current = props.value
      setText(props.value === undefined ? '' : JSON.stringify(props.value, null, 2))
      setInvalid(null)
    }
  }, [props.value])
  const hint = [props.hint, 'Written as JSON.'].filter(Boolean).join(' ')
  return (
    <Field label={props.label} hint={hint} error={invalid ?? props.error}>
      {(id, describedBy) => (
        <textarea
          id={id}
          class="schema-json"
          rows={props.rows ?? 4}
          spellcheck={false}
          aria-describedby={describedBy}
          aria-invalid={invalid || props.error ? true : undefined}
          value={text}
          onInput={(e) => {
            const t = (e.currentTarget as HTMLTextAreaElement).value
            setText(t)
            if (t.trim() === '') {
              setInvalid(null)
              last.current = undefined
              props.onValue(undefined)
              return
            }
            try {
              const v = JSON.parse(t) as unknown
              setInvalid(null)
              last.current = v
              props.onValue(v)
            } catch {
              setInvalid('This is not valid JSON yet: it is kept as typed and not sent.')
            }
          }}
        />
      )}
    </Field>
  )
}
