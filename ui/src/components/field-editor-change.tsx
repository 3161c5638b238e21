import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from './dialog.js'
import { Button, ProblemNote } from './form.js'
import type { CollectionDef } from './field-editor-types.js'

/** What POST /api/v1/collections/:name/changes/preview answers (docs/collections.md "Previewing a change"). */
export interface ChangePreview {
  accepted: boolean
  schemaVersion: { from: number; to: number }
  records: number
  changes: {
    kind: string
    field: string
    from?: string
    updated?: { kind: string; name: string }[]
    kept?: { kind: string; name: string }[]
    valuesLost?: number
    rowsRewritten?: number
  }[]
  indexesAdded: string[]
  indexesDropped: string[]
  refusal: { status: number; error: string; message: string; details: Record<string, unknown> } | null
}

/** The body of a PATCH of a collection. */
export interface ChangeBody {
  fields?: unknown[]
  indexes?: unknown[]
  accessControl?: unknown
  enumChanges?: Record<string, Record<string, string>>
  renames?: Record<string, string>
  drop?: string[]
}

const path = (name: string) => `/api/v1/collections/${encodeURIComponent(name)}`

/** A refusal inside a preview, as a Problem naming the field it concerns. */
function refusalProblem(refusal: NonNullable<ChangePreview['refusal']>): Problem {
  const details = refusal.details
  const field =
    typeof details.field === 'string'
      ? details.field
      : Array.isArray(details.fields) && typeof details.fields[0] === 'string'
        ? details.fields[0]
        : undefined
  return { message: refusal.message, field, code: refusal.error, status: refusal.status }
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`

function describe(change: ChangePreview['changes'][number]): string {
  switch (change.kind) {
    case 'added':
      return `Adds the field ${change.field}.`
    case 'renamed': {
      const updated = change.updated?.length ?? 0
      const kept = change.kept?.length ?? 0
      return `Renames ${change.from ?? '?'} to ${change.field}; ${plural(updated, 'reference')} follow, ${plural(kept, 'reference')} to review by hand.`
    }
    case 'dropped':
      return `Drops the field ${change.field}: ${plural(change.valuesLost ?? 0, 'record')} lose their value.`
    default:
      return `Changes ${change.kind} of ${change.field}${change.rowsRewritten ? `: ${plural(change.rowsRewritten, 'record')} rewritten` : ''}.`
  }
}

/** What a change will do, in sentences. */
export function PreviewSummary(props: { preview: ChangePreview }) {
  const p = props.preview
  return (
    <div class="change-preview" role="status">
      <h3>What this change does</h3>
      <ul>
        {p.changes.map((c, i) => (
          <li key={i}>{describe(c)}</li>
        ))}
        {p.indexesAdded.map((n) => (
          <li key={`+${n}`}>Makes the index {n}.</li>
        ))}
        {p.indexesDropped.map((n) => (
          <li key={`-${n}`}>Drops the index {n}.</li>
        ))}
        {p.changes.length + p.indexesAdded.length + p.indexesDropped.length === 0 ? <li>Nothing changes.</li> : null}
      </ul>
      <p class="hint">
        The collection holds {plural(p.records, 'record')}; its schema version goes from {p.schemaVersion.from} to{' '}
        {p.schemaVersion.to}.
      </p>
    </div>
  )
}

/**
 * A dialog for one change of a collection: its form, then "Review change" asks the server's preview what
 * it would do (or why it would be refused), then "Apply change" sends the PATCH. A refusal is shown with
 * the server's message and the field it concerns; `children` is given it to mark that field.
 */
export function ChangeDialog(props: {
  title: string
  collection: string
  /** The PATCH body the form describes now, or a sentence saying what is missing. */
  body: ChangeBody | string
  onApplied: (collection: CollectionDef) => void
  onClose: () => void
  children: (problem: Problem | null) => ComponentChildren
  applyLabel?: string
}) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [preview, setPreview] = useState<{ for: string; value: ChangePreview } | null>(null)
  const [busy, setBusy] = useState(false)
  const key = typeof props.body === 'string' ? '' : JSON.stringify(props.body)
  const current = preview && preview.for === key ? preview.value : null

  const review = async (e: Event) => {
    e.preventDefault()
    if (typeof props.body === 'string') {
      setProblem({ message: props.body, code: 'client', status: null })
      return
    }
    setBusy(true)
    setProblem(null)
    try {
      const r = await client.transport.request<{ data: ChangePreview }>(
        'POST',
        `${path(props.collection)}/changes/preview`,
        {
          body: props.body,
        },
      )
      setPreview({ for: key, value: r.data })
      if (r.data.refusal) setProblem(refusalProblem(r.data.refusal))
    } catch (err) {
      setPreview(null)
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  const apply = async () => {
    if (typeof props.body === 'string') return
    setBusy(true)
    setProblem(null)
    try {
      const r = await client.transport.request<{ data: CollectionDef }>('PATCH', path(props.collection), {
        body: props.body,
      })
      props.onApplied(r.data)
    } catch (err) {
      setProblem(problemOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form class="change-form" onSubmit={review} noValidate>
        {props.children(problem)}
        {current ? <PreviewSummary preview={current} /> : null}
        <ProblemNote problem={problem} />
        <div class="dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button type="submit" disabled={busy}>
            Review change
          </Button>
          {current?.accepted ? (
            <Button variant="primary" disabled={busy} onClick={() => void apply()}>
              {props.applyLabel ?? 'Apply change'}
            </Button>
          ) : null}
        </div>
      </form>
    </Dialog>
  )
}
