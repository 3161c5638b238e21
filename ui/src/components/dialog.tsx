import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

/**
 * A modal dialog (the platform's <dialog>: focus is trapped and Escape closes it). Rendered only while
 * open; `onClose` hears Escape and the close button.
 */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current
    if (dialog && !dialog.open) dialog.showModal()
    return () => dialog?.close()
  }, [])
  return (
    <dialog
      ref={ref}
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault()
        props.onClose()
      }}
    >
      <header class="dialog-header">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" class="button button-plain" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </header>
      {props.children}
    </dialog>
  )
}
