import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { Field } from './form.js'
import { shown, toAny, type Ctx } from './schema-form-schema.js'

export function Group(props: {
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

export function Checkbox(props: {
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

/** A value of any type: JSON when it parses, else text (a template). */
export function AnyField(props: {
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
