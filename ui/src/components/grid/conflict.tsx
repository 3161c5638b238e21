import { Dialog } from '../dialog.js'
import { display, type Column, type Row } from './fields.js'

export interface Conflict {
  index: number
  column: Column
  /** The value the user saved. */
  mine: unknown
  /** The record as the server holds it now. */
  theirs: Row
}

/** A save refused because the record changed meanwhile: both values, and the user's choice. */
export function ConflictDialog(props: {
  conflict: Conflict
  onKeepMine: () => void
  onTakeTheirs: () => void
  onClose: () => void
}) {
  const { column, mine, theirs } = props.conflict
  return (
    <Dialog title="Someone changed this record" onClose={props.onClose}>
      <p>
        While you were editing <strong>{column.label}</strong>, the record was saved by someone else (it is now at
        version {theirs._version}). Choose which value to keep.
      </p>
      <dl class="conflict-values">
        <dt>Your value</dt>
        <dd data-testid="conflict-mine">{display(column, mine) || '(empty)'}</dd>
        <dt>Their value</dt>
        <dd data-testid="conflict-theirs">{display(column, theirs[column.name]) || '(empty)'}</dd>
      </dl>
      <div class="inline">
        <button type="button" class="button button-primary" onClick={props.onKeepMine}>
          Keep mine
        </button>
        <button type="button" class="button" onClick={props.onTakeTheirs}>
          Take theirs
        </button>
      </div>
    </Dialog>
  )
}
