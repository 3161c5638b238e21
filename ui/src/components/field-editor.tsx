import { useState } from 'preact/hooks'
import { Field, TextField } from './form.js'
import {
  EnumValuesEditor,
  LookupOptions,
  RelationOptions,
  RollupOptions,
  RulesOptions,
  StructureOption,
  type OptionProps,
} from './field-editor-options.js'
import {
  fieldTypes,
  typeGroups,
  typeInfo,
  typesReachableFrom,
  type CollectionDef,
  type FieldDef,
} from './field-editor-types.js'
import type { Problem } from '../api.js'

export interface FieldEditorProps {
  value: FieldDef
  onChange: (next: FieldDef) => void
  /** The field as stored, when an existing field is edited: its name is fixed, its type changes within its group. */
  existing?: FieldDef | undefined
  collections: readonly CollectionDef[]
  /** The collection's name and its other fields. */
  collection: string
  siblings: readonly FieldDef[]
  /** A refusal from the server: shown at the name when it concerns this field. */
  problem?: Problem | null
  /** Mappings for enum values removed from an existing field. */
  enumChanges?: Record<string, string>
  onEnumChanges?: (changes: Record<string, string>) => void
}

/** A new field's starting definition. */
export function blankField(): FieldDef {
  return { name: '', type: 'text', required: false }
}

/** Whether a problem the server named concerns this field (`status`, `fields.2`, `status.enumValues`). */
export function concerns(problem: Problem | null | undefined, name: string): boolean {
  if (!problem?.field || !name) return false
  return problem.field === name || problem.field.split('.')[0] === name
}

/**
 * One field's definition: name, type, label, flags, default value, and the options of its type. Used when
 * a collection is created and by the schema editor; the server checks everything again.
 */
export function FieldEditor(props: FieldEditorProps) {
  const { value, onChange, existing } = props
  const info = typeInfo(value.type)
  const types = existing ? typesReachableFrom(existing.type) : fieldTypes
  const optionProps: OptionProps = {
    value,
    onChange,
    existing,
    collections: props.collections,
    collection: props.collection,
    siblings: props.siblings,
  }
  const nameError = concerns(props.problem, value.name) ? props.problem!.message : undefined
  return (
    <div class="field-editor">
      {existing ? (
        <p class="field-editor-name">
          Field <code>{existing.name}</code>
          {nameError ? (
            <span class="field-error" role="alert">
              {' '}
              {nameError}
            </span>
          ) : null}
        </p>
      ) : (
        <TextField
          label="Field name"
          hint="A lower-case letter, then letters, digits or _ (up to 50)."
          value={value.name}
          onValue={(name) => onChange({ ...value, name })}
          error={nameError}
          pattern="[a-z][a-z0-9_]{0,49}"
          required
        />
      )}
      <Field label="Type" hint={existing && types.length === 1 ? `${info.hint} Its type cannot change.` : info.hint}>
        {(id, describedBy) => (
          <select
            id={id}
            value={value.type}
            aria-describedby={describedBy}
            disabled={types.length === 1}
            onChange={(e) => onChange({ ...value, type: (e.currentTarget as HTMLSelectElement).value })}
          >
            {typeGroups.map((group) => {
              const inGroup = types.filter((t) => t.group === group)
              if (inGroup.length === 0) return null
              return (
                <optgroup key={group} label={group}>
                  {inGroup.map((t) => (
                    <option key={t.type} value={t.type}>
                      {t.label}
                    </option>
                  ))}
                </optgroup>
              )
            })}
          </select>
        )}
      </Field>
      <TextField
        label="Label (optional)"
        value={value.label ?? ''}
        onValue={(label) => onChange({ ...value, label: label || undefined })}
      />
      {info.computed ? null : (
        <fieldset class="field-flags">
          <legend>Options</legend>
          <Check label="Required" checked={value.required} onChange={(required) => onChange({ ...value, required })} />
          <Check label="Unique" checked={!!value.unique} onChange={(unique) => onChange({ ...value, unique })} />
          <Check label="Indexed" checked={!!value.indexed} onChange={(indexed) => onChange({ ...value, indexed })} />
          {info.textLike ? (
            <Check
              label="Translatable"
              checked={!!value.translatable}
              disabled={!!existing}
              onChange={(translatable) => onChange({ ...value, translatable })}
            />
          ) : null}
        </fieldset>
      )}
      {info.option === 'enumValues' ? (
        <EnumValuesEditor
          key={`${value.type}-values`}
          {...optionProps}
          enumChanges={props.enumChanges ?? {}}
          onEnumChanges={props.onEnumChanges ?? (() => undefined)}
        />
      ) : null}
      {info.option === 'relationConfig' ? <RelationOptions {...optionProps} /> : null}
      {info.option === 'lookupConfig' ? <LookupOptions {...optionProps} /> : null}
      {info.option === 'rollupConfig' ? <RollupOptions {...optionProps} /> : null}
      {info.option === 'structure' ? <StructureOption {...optionProps} /> : null}
      <RulesOptions {...optionProps} />
      {info.computed ? null : <DefaultValue key={value.type} value={value} onChange={onChange} />}
    </div>
  )
}

function Check(props: { label: string; checked: boolean; disabled?: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)}
      />
      {props.label}
    </label>
  )
}

const jsonTyped = new Set(['json', 'geo', 'multi_enum'])
const numeric = new Set(['integer', 'decimal', 'number', 'datetime'])

function shown(value: unknown): string {
  if (value === undefined || value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The default value a new record without the field gets, typed as the field's type reads it. */
function DefaultValue(props: { value: FieldDef; onChange: (next: FieldDef) => void }) {
  const { value, onChange } = props
  const [text, setText] = useState(shown(value.defaultValue))
  const [error, setError] = useState<string | undefined>()
  const set = (defaultValue: unknown) => {
    const next = { ...value, defaultValue }
    if (defaultValue === undefined) delete next.defaultValue
    onChange(next)
  }
  if (value.type === 'boolean')
    return (
      <Field label="Default value">
        {(id) => (
          <select
            id={id}
            value={value.defaultValue === undefined ? '' : String(value.defaultValue)}
            onChange={(e) => {
              const v = (e.currentTarget as HTMLSelectElement).value
              set(v === '' ? undefined : v === 'true')
            }}
          >
            <option value="">(none)</option>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        )}
      </Field>
    )
  const json = jsonTyped.has(value.type)
  return (
    <TextField
      label="Default value (optional)"
      hint={json ? 'As JSON.' : numeric.has(value.type) ? 'A number.' : undefined}
      value={text}
      error={error}
      onValue={(raw) => {
        setText(raw)
        setError(undefined)
        if (raw === '') return set(undefined)
        if (numeric.has(value.type)) {
          const n = Number(raw)
          if (Number.isNaN(n)) return setError('This is not a number.')
          return set(n)
        }
        if (!json) return set(raw)
        try {
          set(JSON.parse(raw) as unknown)
        } catch {
          setError('This is not valid JSON yet.')
        }
      }}
    />
  )
}
