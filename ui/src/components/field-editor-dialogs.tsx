import { useState } from 'preact/hooks'
import { ChangeDialog, type ChangeBody } from './field-editor-change.js'
import { blankField, FieldEditor } from './field-editor.js'
import { cleanField, namePattern, type CollectionDef, type FieldDef } from './field-editor-types.js'
import { TextField } from './form.js'

interface Props {
  collection: CollectionDef
  collections: readonly CollectionDef[]
  onApplied: (c: CollectionDef) => void
  onClose: () => void
}

/** Adds a field (no `field`) or edits one: its whole definition through the field editor. */
export function FieldDialog(props: Props & { field?: FieldDef | undefined }) {
  const c = props.collection
  const existing = props.field
  const [draft, setDraft] = useState<FieldDef>(existing ?? blankField())
  const [enumChanges, setEnumChanges] = useState<Record<string, string>>({})
  const others = c.fields.filter((f) => f.name !== existing?.name)
  let body: ChangeBody | string
  if (!existing && !namePattern.test(draft.name))
    body = 'Give the field a name: a lower-case letter, then letters, digits or _.'
  else {
    const fields = existing
      ? c.fields.map((f) => (f.name === existing.name ? cleanField(draft) : f))
      : [...c.fields, cleanField(draft)]
    const mapped = Object.keys(enumChanges).length > 0 && existing
    body = { fields, ...(mapped ? { enumChanges: { [existing.name]: enumChanges } } : {}) }
  }
  return (
    <ChangeDialog
      title={existing ? `Edit field ${existing.name}` : 'Add a field'}
      collection={c.name}
      body={body}
      onApplied={props.onApplied}
      onClose={props.onClose}
    >
      {(problem) => (
        <FieldEditor
          value={draft}
          onChange={setDraft}
          existing={existing}
          collections={props.collections}
          collection={c.name}
          siblings={others}
          problem={problem}
          enumChanges={enumChanges}
          onEnumChanges={setEnumChanges}
        />
      )}
    </ChangeDialog>
  )
}

/** Renames a field: its data is kept; what names it follows (the preview says what). */
export function RenameDialog(props: Props & { field: FieldDef }) {
  const c = props.collection
  const [name, setName] = useState(props.field.name)
  const body: ChangeBody | string =
    !namePattern.test(name) || name === props.field.name
      ? 'Give the field a new name: a lower-case letter, then letters, digits or _.'
      : {
          fields: c.fields.map((f) => (f.name === props.field.name ? { ...f, name } : f)),
          renames: { [props.field.name]: name },
        }
  return (
    <ChangeDialog
      title={`Rename field ${props.field.name}`}
      collection={c.name}
      body={body}
      onApplied={props.onApplied}
      onClose={props.onClose}
      applyLabel="Rename field"
    >
      {(problem) => (
        <TextField
          label="New name"
          value={name}
          onValue={setName}
          error={problem?.field === name || problem?.field === props.field.name ? problem.message : undefined}
        />
      )}
    </ChangeDialog>
  )
}

/** Drops a field with its values; compound indexes naming it go with it. */
export function DropDialog(props: Props & { field: FieldDef }) {
  const c = props.collection
  const name = props.field.name
  const named = (fields: string[]) => fields.some((f) => f.replace(/^-/, '') === name)
  const body: ChangeBody = {
    fields: c.fields.filter((f) => f.name !== name),
    drop: [name],
    ...(c.indexes.some((i) => named(i.fields))
      ? { indexes: c.indexes.filter((i) => !named(i.fields)).map((i) => ({ fields: i.fields, unique: i.unique })) }
      : {}),
  }
  return (
    <ChangeDialog
      title={`Drop field ${name}`}
      collection={c.name}
      body={body}
      onApplied={props.onApplied}
      onClose={props.onClose}
      applyLabel="Drop field"
    >
      {() => (
        <p>
          Drop <code>{name}</code> and every value it holds? This cannot be undone. Review the change to see how many
          records hold a value; compound indexes naming it are removed with it.
        </p>
      )}
    </ChangeDialog>
  )
}
