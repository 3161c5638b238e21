import { useState } from 'preact/hooks'
import { Field, TextField } from './form.js'
import {
  typeInfo,
  type CollectionDef,
  type FieldDef,
  type OnDelete,
  type RelationType,
  type RollupFunction,
  type ValidationRules,
} from './field-editor-types.js'

/** What the type-specific parts of the field editor are given. */
export interface OptionProps {
  value: FieldDef
  onChange: (next: FieldDef) => void
  /** The field as stored, when an existing field is edited. */
  existing: FieldDef | undefined
  /** The project's collections (relation targets, lookup targets). */
  collections: readonly CollectionDef[]
  /** The collection's own name and its other fields (a relation to itself, lookups through its relations). */
  collection: string
  siblings: readonly FieldDef[]
}

const selectValue = (e: Event) => (e.currentTarget as HTMLSelectElement).value

/** A select inside a labelled Field. */
export function SelectField(props: {
  label: string
  hint?: string
  value: string
  onValue: (value: string) => void
  options: readonly { value: string; label: string }[]
  disabled?: boolean
  error?: string | undefined
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {(id, describedBy) => (
        <select
          id={id}
          value={props.value}
          disabled={props.disabled}
          aria-describedby={describedBy}
          aria-invalid={props.error ? true : undefined}
          onChange={(e) => props.onValue(selectValue(e))}
        >
          {props.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
}

/** An enum's values, one per line; values removed from an existing field are mapped for its records. */
export function EnumValuesEditor(
  props: OptionProps & {
    enumChanges: Record<string, string>
    onEnumChanges: (changes: Record<string, string>) => void
  },
) {
  const values = props.value.enumValues ?? []
  const [text, setText] = useState(values.join('\n'))
  const removed = (props.existing?.enumValues ?? []).filter((v) => !values.includes(v))
  return (
    <>
      <Field label="Values" hint="One value per line, in the order they are offered.">
        {(id, describedBy) => (
          <textarea
            id={id}
            class="enum-values"
            aria-describedby={describedBy}
            value={text}
            onInput={(e) => {
              const raw = (e.currentTarget as HTMLTextAreaElement).value
              setText(raw)
              const next = raw
                .split('\n')
                .map((v) => v.trim())
                .filter((v, i, all) => v !== '' && all.indexOf(v) === i)
              props.onChange({ ...props.value, enumValues: next })
            }}
          />
        )}
      </Field>
      {typeof props.value.defaultValue === 'string' && !values.includes(props.value.defaultValue) ? (
        <p class="field-error">
          The default value “{props.value.defaultValue}” is not one of the values: change it below.
        </p>
      ) : null}
      {removed.length > 0 ? (
        <fieldset class="enum-map">
          <legend>Removed values</legend>
          <p class="hint">Records holding a removed value get the value chosen here (enumChanges).</p>
          {removed.map((old) => (
            <SelectField
              key={old}
              label={`Records holding “${old}” become`}
              value={props.enumChanges[old] ?? ''}
              onValue={(v) => {
                const next = { ...props.enumChanges }
                if (v) next[old] = v
                else delete next[old]
                props.onEnumChanges(next)
              }}
              options={[{ value: '', label: 'No mapping (refused if records hold it)' }].concat(
                values.map((v) => ({ value: v, label: v })),
              )}
            />
          ))}
        </fieldset>
      ) : null}
    </>
  )
}

const userFields = ['id', 'name', 'email']

/** The fields a relation's display field, a lookup's or a rollup's target field may name. */
function targetFields(props: OptionProps, target: string): string[] {
  if (target === 'users') return userFields
  const fields =
    target === props.collection
      ? [props.value, ...props.siblings]
      : (props.collections.find((c) => c.name === target)?.fields ?? [])
  return ['id', ...fields.map((f) => f.name).filter((n) => n !== '')]
}

export function RelationOptions(props: OptionProps) {
  const config = props.value.relationConfig ?? { targetCollection: '', relationType: 'belongsTo' as RelationType }
  const set = (patch: Partial<typeof config>) =>
    props.onChange({ ...props.value, relationConfig: { ...config, ...patch } })
  const fixed = props.existing?.type === 'relation'
  const targets = [props.collection, ...props.collections.map((c) => c.name).filter((n) => n !== props.collection)]
  return (
    <>
      <SelectField
        label="Target collection"
        hint={fixed ? 'The target and kind of a relation cannot change: add a new field instead.' : undefined}
        value={config.targetCollection}
        disabled={fixed}
        onValue={(v) => set({ targetCollection: v, displayField: undefined })}
        options={[
          { value: '', label: 'Choose…' },
          { value: 'users', label: 'users (the project’s users)' },
        ].concat(targets.filter((n) => n !== '').map((n) => ({ value: n, label: n })))}
      />
      <SelectField
        label="Kind"
        value={config.relationType}
        disabled={fixed}
        onValue={(v) => set({ relationType: v as RelationType })}
        options={[
          { value: 'belongsTo', label: 'belongsTo: one id' },
          { value: 'hasMany', label: 'hasMany: a list of ids' },
        ]}
      />
      <SelectField
        label="Display field"
        value={config.displayField ?? ''}
        onValue={(v) => set({ displayField: v || undefined })}
        options={[{ value: '', label: '(none)' }].concat(
          targetFields(props, config.targetCollection).map((n) => ({ value: n, label: n })),
        )}
      />
      <SelectField
        label="When the target is deleted"
        value={config.onDelete ?? 'set-null'}
        onValue={(v) => set({ onDelete: v as OnDelete })}
        options={[
          { value: 'set-null', label: 'set-null: clear the field' },
          { value: 'cascade', label: 'cascade: delete this record too' },
          { value: 'restrict', label: 'restrict: refuse the deletion' },
        ]}
      />
    </>
  )
}

/** Relation fields of the collection (belongsTo for lookups, hasMany for rollups). */
function relationsOf(props: OptionProps, kind: RelationType) {
  return props.siblings.filter((f) => f.type === 'relation' && f.relationConfig?.relationType === kind)
}

export function LookupOptions(props: OptionProps) {
  const config = props.value.lookupConfig ?? { relationField: '', targetField: '' }
  const relations = relationsOf(props, 'belongsTo')
  const target = relations.find((f) => f.name === config.relationField)?.relationConfig?.targetCollection ?? ''
  const set = (patch: Partial<typeof config>) =>
    props.onChange({ ...props.value, lookupConfig: { ...config, ...patch } })
  return (
    <>
      <SelectField
        label="Through relation"
        hint={relations.length === 0 ? 'Add a belongsTo relation field first.' : undefined}
        value={config.relationField}
        onValue={(v) => set({ relationField: v, targetField: '' })}
        options={[{ value: '', label: 'Choose…' }].concat(relations.map((f) => ({ value: f.name, label: f.name })))}
      />
      <SelectField
        label="Field of the target"
        value={config.targetField}
        onValue={(v) => set({ targetField: v })}
        options={[{ value: '', label: 'Choose…' }].concat(
          (target ? targetFields(props, target) : []).map((n) => ({ value: n, label: n })),
        )}
      />
    </>
  )
}

export function RollupOptions(props: OptionProps) {
  const config = props.value.rollupConfig ?? { relationField: '', function: 'count' as RollupFunction }
  const relations = relationsOf(props, 'hasMany')
  const target = relations.find((f) => f.name === config.relationField)?.relationConfig?.targetCollection ?? ''
  const set = (patch: Partial<typeof config>) =>
    props.onChange({ ...props.value, rollupConfig: { ...config, ...patch } })
  return (
    <>
      <SelectField
        label="Over relation"
        hint={relations.length === 0 ? 'Add a hasMany relation field first.' : undefined}
        value={config.relationField}
        onValue={(v) => set({ relationField: v, targetField: undefined })}
        options={[{ value: '', label: 'Choose…' }].concat(relations.map((f) => ({ value: f.name, label: f.name })))}
      />
      <SelectField
        label="Function"
        value={config.function}
        onValue={(v) => set({ function: v as RollupFunction })}
        options={['count', 'sum', 'avg', 'min', 'max'].map((f) => ({ value: f, label: f }))}
      />
      <SelectField
        label="Field of the target"
        hint="Not needed for count."
        value={config.targetField ?? ''}
        onValue={(v) => set({ targetField: v || undefined })}
        options={[{ value: '', label: '(none)' }].concat(
          (target ? targetFields(props, target) : []).map((n) => ({ value: n, label: n })),
        )}
      />
    </>
  )
}

/** The validation rules the type takes: lengths and a pattern for text, a range for numbers. */
export function RulesOptions(props: OptionProps) {
  const rules = typeInfo(props.value.type).rules ?? []
  if (rules.length === 0) return null
  const current = props.value.validationRules ?? {}
  const set = (rule: keyof ValidationRules, raw: string) => {
    const next: Record<string, unknown> = { ...current }
    if (raw.trim() === '') delete next[rule]
    else next[rule] = rule === 'pattern' ? raw : Number(raw)
    props.onChange({ ...props.value, validationRules: next as ValidationRules })
  }
  const labels: Record<keyof ValidationRules, string> = {
    minLength: 'Minimum length',
    maxLength: 'Maximum length',
    min: 'Minimum',
    max: 'Maximum',
    pattern: 'Pattern (regular expression)',
  }
  return (
    <fieldset class="field-rules">
      <legend>Validation rules</legend>
      {rules.map((rule) => (
        <TextField
          key={rule}
          label={labels[rule]}
          type={rule === 'pattern' ? 'text' : 'number'}
          value={current[rule] === undefined ? '' : String(current[rule])}
          onValue={(v) => set(rule, v)}
        />
      ))}
    </fieldset>
  )
}

/** A json field's structure, as JSON (docs/structure.md); empty for none. */
export function StructureOption(props: OptionProps) {
  const [text, setText] = useState(
    props.value.structure === undefined ? '' : JSON.stringify(props.value.structure, null, 2),
  )
  const [error, setError] = useState<string | undefined>()
  return (
    <Field label="Structure (JSON, optional)" hint="{ enforcement, shape }: see the structure docs." error={error}>
      {(id, describedBy) => (
        <textarea
          id={id}
          aria-describedby={describedBy}
          value={text}
          onInput={(e) => {
            const raw = (e.currentTarget as HTMLTextAreaElement).value
            setText(raw)
            if (raw.trim() === '') {
              setError(undefined)
              const { structure: _, ...rest } = props.value
              props.onChange(rest)
              return
            }
            try {
              props.onChange({ ...props.value, structure: JSON.parse(raw) as unknown })
              setError(undefined)
            } catch {
              setError('This is not valid JSON yet.')
            }
          }}
        />
      )}
    </Field>
  )
}
