import { useId } from 'preact/hooks'
import {
  draftOf,
  filterOf,
  listValue,
  noValue,
  operators,
  variables,
  type Condition,
  type FilterDraft,
  type Operator,
  type ValueKind,
} from './access-filter.js'
import { Button } from './form.js'

/** The editor. `fields` are the names offered for the field inputs (the grant's collection's, when known). */
export function ItemFilterEditor(props: {
  draft: FilterDraft
  onDraft: (draft: FilterDraft) => void
  fields: readonly string[]
  error?: string | undefined
}) {
  const id = useId()
  const { draft, onDraft } = props
  const setRow = (index: number, change: Partial<Condition>) => {
    if (draft.mode !== 'rows') return
    onDraft({ ...draft, rows: draft.rows.map((r, i) => (i === index ? { ...r, ...change } : r)) })
  }
  return (
    <fieldset class="access-filter" aria-describedby={props.error ? `${id}-error` : `${id}-hint`}>
      <legend>Rows this grant reaches (item filter)</legend>
      <p class="hint" id={`${id}-hint`}>
        No condition: every row. Variables such as <code>$CURRENT_USER</code> are resolved for whoever makes the
        request.
      </p>
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
      <datalist id={`${id}-fields`}>
        {props.fields.map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
      {draft.mode === 'json' ? (
        <div class="field">
          <label for={`${id}-json`}>Filter as JSON (object format)</label>
          {draft.note ? <p class="hint">{draft.note}</p> : null}
          <textarea
            id={`${id}-json`}
            spellcheck={false}
            value={draft.text}
            onInput={(e) => onDraft({ mode: 'json', text: (e.currentTarget as HTMLTextAreaElement).value })}
          />
          <div class="inline">
            <Button
              onClick={() => {
                const built = filterOf(draft)
                if (!built.ok) return onDraft({ ...draft, note: built.message })
                const back = draftOf(built.filter)
                onDraft(
                  back.mode === 'rows'
                    ? back
                    : { ...draft, note: 'This filter cannot be shown as rows; keep editing it as JSON.' },
                )
              }}
            >
              Edit as rows
            </Button>
          </div>
        </div>
      ) : (
        <>
          {draft.rows.length > 1 ? (
            <div class="field">
              <label for={`${id}-match`}>A row is reached when it matches</label>
              <select
                id={`${id}-match`}
                value={draft.match}
                onChange={(e) =>
                  onDraft({ ...draft, match: (e.currentTarget as HTMLSelectElement).value as 'all' | 'any' })
                }
              >
                <option value="all">all the conditions</option>
                <option value="any">any of the conditions</option>
              </select>
            </div>
          ) : null}
          <ol class="access-conditions">
            {draft.rows.map((row, i) => (
              <li key={i} class="access-condition">
                <fieldset>
                  <legend>Condition {i + 1}</legend>
                  <div class="access-condition-inputs">
                    <div class="field">
                      <label for={`${id}-f${i}`}>Field</label>
                      <input
                        id={`${id}-f${i}`}
                        list={`${id}-fields`}
                        value={row.field}
                        autoComplete="off"
                        onInput={(e) => setRow(i, { field: (e.currentTarget as HTMLInputElement).value })}
                      />
                    </div>
                    <div class="field">
                      <label for={`${id}-o${i}`}>Operator</label>
                      <select
                        id={`${id}-o${i}`}
                        value={row.op}
                        onChange={(e) => setRow(i, { op: (e.currentTarget as HTMLSelectElement).value as Operator })}
                      >
                        {operators.map((o) => (
                          <option key={o.op} value={o.op}>
                            {o.label}
                          </option>
                        ))}
                      </select>
                    </div>
                    {noValue(row.op) ? null : (
                      <>
                        <div class="field">
                          <label for={`${id}-k${i}`}>Value is</label>
                          <select
                            id={`${id}-k${i}`}
                            value={row.kind}
                            onChange={(e) => {
                              const kind = (e.currentTarget as HTMLSelectElement).value as ValueKind
                              setRow(i, {
                                kind,
                                value:
                                  kind === 'variable'
                                    ? variables[0].name
                                    : kind === 'boolean'
                                      ? 'true'
                                      : row.kind === 'variable' || row.kind === 'boolean'
                                        ? ''
                                        : row.value,
                              })
                            }}
                          >
                            <option value="text">text</option>
                            <option value="number">a number</option>
                            <option value="boolean">true or false</option>
                            {listValue(row.op) ? null : <option value="variable">a variable</option>}
                          </select>
                        </div>
                        <div class="field">
                          <label for={`${id}-v${i}`}>{listValue(row.op) ? 'Values (comma-separated)' : 'Value'}</label>
                          {row.kind === 'variable' ? (
                            <select
                              id={`${id}-v${i}`}
                              value={row.value}
                              onChange={(e) => setRow(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                            >
                              {variables.map((v) => (
                                <option key={v.name} value={v.name}>
                                  {v.name} — {v.label}
                                </option>
                              ))}
                            </select>
                          ) : row.kind === 'boolean' && !listValue(row.op) ? (
                            <select
                              id={`${id}-v${i}`}
                              value={row.value}
                              onChange={(e) => setRow(i, { value: (e.currentTarget as HTMLSelectElement).value })}
                            >
                              <option value="true">true</option>
                              <option value="false">false</option>
                            </select>
                          ) : (
                            <input
                              id={`${id}-v${i}`}
                              value={row.value}
                              inputMode={row.kind === 'number' ? 'decimal' : undefined}
                              onInput={(e) => setRow(i, { value: (e.currentTarget as HTMLInputElement).value })}
                            />
                          )}
                        </div>
                      </>
                    )}
                    <Button
                      class="access-remove-condition"
                      aria-label={`Remove condition ${i + 1}`}
                      onClick={() => onDraft({ ...draft, rows: draft.rows.filter((_, j) => j !== i) })}
                    >
                      Remove
                    </Button>
                  </div>
                </fieldset>
              </li>
            ))}
          </ol>
          <div class="inline">
            <Button
              onClick={() =>
                onDraft({
                  ...draft,
                  rows: [...draft.rows, { field: '', op: '_eq', kind: 'text', value: '' }],
                })
              }
            >
              Add a condition
            </Button>
            <Button
              onClick={() => {
                const built = filterOf(draft)
                if (built.ok)
                  return onDraft({
                    mode: 'json',
                    text: built.filter === undefined ? '' : JSON.stringify(built.filter, null, 2),
                  })
                // Keep what was typed: values that do not fit their kind go over as text.
                const asText = filterOf({ ...draft, rows: draft.rows.map((r) => ({ ...r, kind: 'text' })) })
                onDraft({
                  mode: 'json',
                  text: asText.ok && asText.filter !== undefined ? JSON.stringify(asText.filter, null, 2) : '',
                  note: built.message,
                })
              }}
            >
              Edit as JSON
            </Button>
          </div>
        </>
      )}
    </fieldset>
  )
}
