import type { ButtonHTMLAttributes, ComponentChildren, InputHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'
import type { Problem } from '../api.js'

/** A labelled input; the error under it when the server named this field. */
export function Field(props: {
  label: string
  hint?: string
  error?: string | undefined
  children: (id: string, describedBy: string | undefined) => ComponentChildren
}) {
  const id = useId()
  const describedBy = props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined
  return (
    <div class={props.error ? 'field field-invalid' : 'field'}>
      <label for={id}>{props.label}</label>
      {props.children(id, describedBy)}
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

/** The input attributes a TextField passes on. */
export interface InputOptions {
  type?: 'text' | 'email' | 'password' | 'number' | 'url' | 'search' | 'tel' | 'datetime-local' | 'date'
  name?: string
  autoComplete?: string
  required?: boolean
  disabled?: boolean
  placeholder?: string
  inputMode?: 'numeric' | 'text' | 'email' | 'decimal'
  pattern?: string
  minLength?: number
  maxLength?: number
}

/** A text-like input inside a Field. */
export function TextField(
  props: {
    label: string
    hint?: string
    value: string
    onValue: (value: string) => void
    error?: string | undefined
  } & InputOptions,
) {
  const { label, hint, value, onValue, error, ...rest } = props
  return (
    <Field label={label} hint={hint} error={error}>
      {(id, describedBy) => (
        <input
          {...({
            ...rest,
            type: rest.type ?? 'text',
            id,
            value,
            'aria-invalid': error ? true : undefined,
            'aria-describedby': describedBy,
            onInput: (e: Event) => onValue((e.currentTarget as HTMLInputElement).value),
          } as InputHTMLAttributes<HTMLInputElement>)}
        />
      )}
    </Field>
  )
}

/** A failure shown in words, with the field it concerns; announced to screen readers. */
export function ProblemNote(props: { problem: Problem | null }) {
  if (!props.problem) return null
  return (
    <div class="problem" role="alert">
      <p>
        {props.problem.message}
        {props.problem.field ? <span class="problem-field"> ({props.problem.field})</span> : null}
      </p>
    </div>
  )
}

export function Button(props: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'danger' | 'plain' }) {
  const { variant = 'plain', class: className, ...rest } = props
  return <button type="button" {...rest} class={`button button-${variant} ${className ?? ''}`.trim()} />
}
