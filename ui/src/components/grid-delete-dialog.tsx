import { Dialog } from './dialog.js'

/** Asks before the selected records are deleted (soft-deleted: they can be restored). */
export function DeleteSelectedDialog(props: { count: number; onDelete: () => void; onClose: () => void }) {
  return (
    <Dialog title="Delete the selected records?" onClose={props.onClose}>
      <p>
        {props.count} record{props.count === 1 ? '' : 's'} will be deleted. Deleted records can be restored (Show
        deleted records).
      </p>
      <div class="inline">
        <button type="button" class="button button-danger" onClick={props.onDelete}>
          Delete {props.count}
        </button>
        <button type="button" class="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  )
}
