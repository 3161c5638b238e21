import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { problemOf, type Problem } from '../api.js'
import { Dialog } from './dialog.js'
import { Button, ProblemNote } from './form.js'

/**
 * Asks before something that cannot be undone (a delete). The action runs on confirm; a refusal is shown in
 * the dialog, which then stays open; success closes it.
 */
export function ConfirmDialog(props: {
  title: string
  confirmLabel: string
  onConfirm: () => Promise<void>
  onClose: () => void
  children: ComponentChildren
}) {
  const [busy, setBusy] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  async function confirm() {
    setBusy(true)
    setProblem(null)
    try {
      await props.onConfirm()
      props.onClose()
    } catch (err) {
      setProblem(problemOf(err))
      setBusy(false)
    }
  }
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <div class="system-dialog-body">
        {props.children}
        <ProblemNote problem={problem} />
        <div class="inline">
          <Button variant="danger" disabled={busy} onClick={() => void confirm()}>
            {props.confirmLabel}
          </Button>
          <Button onClick={props.onClose}>Cancel</Button>
        </div>
      </div>
    </Dialog>
  )
}
