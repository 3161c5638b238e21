import { useState } from 'preact/hooks'
import { Dialog } from './dialog.js'
import { Button } from './form.js'

export function DeleteFlow(props: { name: string; busy: boolean; onDuplicate: () => void; onDelete: () => void }) {
  const [open, setOpen] = useState(false)
  return (
    <section class="card" aria-labelledby="flow-delete">
      <h2 id="flow-delete">Copy or delete</h2>
      <p class="hint">A copy starts as a draft with the saved steps, named "{props.name} (copy)".</p>
      <div class="inline">
        <Button disabled={props.busy} onClick={props.onDuplicate}>
          Duplicate
        </Button>
        <Button variant="danger" disabled={props.busy} onClick={() => setOpen(true)}>
          Delete this flow
        </Button>
      </div>
      {open ? (
        <Dialog title={`Delete ${props.name}?`} onClose={() => setOpen(false)}>
          <p>Its versions, runs and step logs go with it, and its webhook stops answering.</p>
          <div class="inline">
            <Button
              variant="danger"
              onClick={() => {
                setOpen(false)
                props.onDelete()
              }}
            >
              Delete
            </Button>
            <Button onClick={() => setOpen(false)}>Cancel</Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  )
}
