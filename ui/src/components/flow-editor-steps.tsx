import { useState } from 'preact/hooks'
import type { OperationInfo, Step } from './flow-api.js'
import { Field } from './form.js'

export function AddStep(props: { catalog: OperationInfo[]; taken: string[]; onAdd: (step: Step) => void }) {
  const [type, setType] = useState('')
  const categories = [...new Set(props.catalog.map((op) => op.category))]
  const chosen = props.catalog.find((op) => op.type === type)
  return (
    <form
      class="card flow-add"
      aria-labelledby="flow-add-title"
      onSubmit={(e) => {
        e.preventDefault()
        if (!type) return
        let key = type
        for (let n = 2; props.taken.includes(key); n++) key = `${type}_${n}`
        props.onAdd({ key, type, config: {} })
        setType('')
      }}
    >
      <h3 id="flow-add-title">Add a step</h3>
      <div class="inline">
        <Field label="Operation" hint={chosen?.description ?? 'Its settings form comes from the operation.'}>
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={type}
              onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">(choose an operation)</option>
              {categories.map((category) => (
                <optgroup key={category} label={category}>
                  {props.catalog
                    .filter((op) => op.category === category)
                    .map((op) => (
                      <option key={op.type} value={op.type}>
                        {op.name} ({op.type})
                      </option>
                    ))}
                </optgroup>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" class="button" disabled={!type}>
          Add step
        </button>
      </div>
    </form>
  )
}
