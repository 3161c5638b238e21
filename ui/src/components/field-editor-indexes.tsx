import { useState } from 'preact/hooks'
import { ChangeDialog } from './field-editor-change.js'
import { TextField } from './form.js'
import { Button } from './form.js'
import { typeInfo, type CollectionDef, type CompoundIndex } from './field-editor-types.js'

const plain = (i: CompoundIndex) => ({ fields: i.fields, unique: i.unique })

/** Types a compound index cannot hold (docs/collections.md "Compound indexes"). */
function indexable(c: CollectionDef): string[] {
  return c.fields
    .filter(
      (f) =>
        !typeInfo(f.type).computed &&
        !['json', 'jsonb', 'multi_enum', 'geo'].includes(f.type) &&
        !f.translatable &&
        f.relationConfig?.relationType !== 'hasMany',
    )
    .map((f) => f.name)
}

/** The collection's compound indexes: listed, added, removed (each through the change preview). */
export function IndexesSection(props: { collection: CollectionDef; onApplied: (c: CollectionDef) => void }) {
  const c = props.collection
  const [dialog, setDialog] = useState<{ kind: 'add' } | { kind: 'remove'; index: number } | null>(null)
  const [fields, setFields] = useState('')
  const [unique, setUnique] = useState(false)
  const close = () => setDialog(null)
  const applied = (next: CollectionDef) => {
    setDialog(null)
    setFields('')
    setUnique(false)
    props.onApplied(next)
  }
  const wanted = fields
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)
  return (
    <section class="card" aria-labelledby="indexes-title">
      <div class="section-header">
        <h2 id="indexes-title">Compound indexes</h2>
        <Button onClick={() => setDialog({ kind: 'add' })}>Add index</Button>
      </div>
      {c.indexes.length === 0 ? (
        <p class="empty">
          None. An index over several fields serves lists that filter on the first and sort on the next.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Fields</th>
                <th scope="col">Unique</th>
                <th scope="col">Name</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {c.indexes.map((index, i) => (
                <tr key={index.name ?? i}>
                  <td>
                    <code>{index.fields.join(', ')}</code>
                  </td>
                  <td>{index.unique ? 'unique' : ''}</td>
                  <td>
                    <code>{index.name}</code>
                  </td>
                  <td>
                    <Button
                      aria-label={`Remove index on ${index.fields.join(', ')}`}
                      onClick={() => setDialog({ kind: 'remove', index: i })}
                    >
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {dialog?.kind === 'add' ? (
        <ChangeDialog
          title="Add a compound index"
          collection={c.name}
          body={
            wanted.length === 0
              ? 'Name the fields of the index.'
              : { indexes: [...c.indexes.map(plain), { fields: wanted, unique }] }
          }
          onApplied={applied}
          onClose={close}
        >
          {() => (
            <>
              <TextField
                label="Fields, in order"
                hint={`Separated by commas; a leading - sorts descending. Indexable: ${[...indexable(c), 'created_at', 'updated_at', 'created_by', 'updated_by', 'owned_by'].join(', ')}.`}
                value={fields}
                onValue={setFields}
                placeholder="status, -created_at"
              />
              <label class="check">
                <input
                  type="checkbox"
                  checked={unique}
                  onChange={(e) => setUnique((e.currentTarget as HTMLInputElement).checked)}
                />
                Unique: no two records may share the combination
              </label>
            </>
          )}
        </ChangeDialog>
      ) : null}
      {dialog?.kind === 'remove' ? (
        <ChangeDialog
          title="Remove a compound index"
          collection={c.name}
          body={{ indexes: c.indexes.filter((_, i) => i !== dialog.index).map(plain) }}
          onApplied={applied}
          onClose={close}
          applyLabel="Remove index"
        >
          {() => (
            <p>
              Remove the index on <code>{c.indexes[dialog.index]?.fields.join(', ')}</code>? No data is lost; lists that
              used it may be slower.
            </p>
          )}
        </ChangeDialog>
      ) : null}
    </section>
  )
}
