import type { ComponentChildren } from 'preact'
import { PlinthError } from '@plinth/client'
import { useState } from 'preact/hooks'
import { client, problemOf, type Problem } from '../api.js'
import { Dialog } from './dialog.js'
import { Button, ProblemNote } from './form.js'

// Shared pieces of the access screens (users, roles, a role's grants, API keys, the account).

export interface RoleRow {
  id: string
  name: string
  description: string
  adminAccess: boolean
  builtIn: boolean
  createdAt: number
  updatedAt: number
}

export interface GrantRow {
  resource: string
  action: string
  item_filter?: unknown
  fields?: string[] | null
}

export interface UserRow {
  id: string
  email: string | null
  username: string | null
  name: string
  role: string
  projectId: string
  banned: boolean
  totpEnabled: boolean
  createdAt: number
  updatedAt: number
  lastSignInAt: number | null
}

export interface CollectionInfo {
  name: string
  fields: { name: string; type?: string }[]
}

/** The actions a grant or a capability may name (docs/permissions.md). */
export const actions = [
  'read',
  'create',
  'update',
  'delete',
  'write',
  'manage',
  'execute',
  'transfer',
  'hard_delete',
  'view_deleted',
  'purge_deleted',
] as const

/** The resources Plinth knows besides one collection's (src/modules/access/resources.ts, read-only). */
export const systemResources = [
  '*',
  'collections/*',
  'schema/*',
  'system/*',
  'system/api-keys',
  'system/audit-log',
  'system/automate',
  'system/blueprints',
  'system/containers',
  'system/databases',
  'system/files',
  'system/lens-attachments',
  'system/lenses',
  'system/navigation',
  'system/renderers',
  'system/roles',
  'system/search-indexes',
  'system/settings',
  'system/storage-connections',
  'system/users',
  'system/views',
] as const

export const listRoles = () => client.transport.request<{ data: RoleRow[] }>('GET', '/api/v1/roles').then((r) => r.data)

/** The project's collections the caller may read, with their fields; none when it may read none. */
export const listCollections = () =>
  client.transport
    .request<{ data: { name: string; fields: Record<string, unknown>[] }[] }>('GET', '/api/v1/collections')
    .then((r) =>
      r.data.map(
        (c): CollectionInfo => ({
          name: c.name,
          fields: c.fields
            .filter((f) => typeof f.name === 'string')
            .map((f) => ({ name: f.name as string, type: typeof f.type === 'string' ? f.type : undefined })),
        }),
      ),
    )
    .catch((): CollectionInfo[] => [])

/** A Unix-seconds time as the reader's locale writes it; a dash for none. */
export function when(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—'
  return new Date(seconds * 1000).toLocaleString()
}

/** A time element for a Unix-seconds value. */
export function Time(props: { seconds: number | null | undefined; none?: string }) {
  if (props.seconds === null || props.seconds === undefined) return <span>{props.none ?? '—'}</span>
  const date = new Date(props.seconds * 1000)
  return <time dateTime={date.toISOString()}>{date.toLocaleString()}</time>
}

/**
 * A dialog asking to confirm something that cannot be undone; `onConfirm` runs the change and the dialog
 * closes when it succeeds, or shows the server's refusal.
 */
export function ConfirmDialog(props: {
  title: string
  confirmLabel: string
  onConfirm: () => Promise<void>
  onClose: () => void
  children: ComponentChildren
}) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <div class="access-dialog-body">
        {props.children}
        <ProblemNote problem={problem} />
        <div class="access-dialog-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button
            variant="danger"
            disabled={busy}
            onClick={async () => {
              setBusy(true)
              setProblem(null)
              try {
                await props.onConfirm()
                props.onClose()
              } catch (err) {
                setProblem(problemOf(err))
                setBusy(false)
              }
            }}
          >
            {props.confirmLabel}
          </Button>
        </div>
      </div>
    </Dialog>
  )
}

/** A refusal: the problem, and a message per field when the server named several (`details.issues`). */
export interface Refusal extends Problem {
  readonly fields: Readonly<Record<string, string>>
}

/**
 * Turns anything thrown into a Refusal. Request validation names each bad field (`body.email`); the
 * grants of a role are named in the message (`grants[1].item_filter: Unknown field "nope"`).
 */
export function refusalOf(err: unknown): Refusal {
  const problem = problemOf(err)
  const fields: Record<string, string> = {}
  const details = err instanceof PlinthError ? ((err.details ?? {}) as Record<string, unknown>) : {}
  if (Array.isArray(details.issues))
    for (const issue of details.issues as { location?: unknown; message?: unknown }[]) {
      if (typeof issue?.location !== 'string' || typeof issue.message !== 'string') continue
      const field = issue.location.replace(/^body\./, '')
      fields[field] ??= issue.message
    }
  const grant = /^(grants\[\d+\]\.[a-z_]+)[: ]\s*(.*)$/s.exec(problem.message)
  if (grant) fields[grant[1]!] ??= grant[2]!
  if (problem.field) fields[problem.field] ??= problem.message
  return { ...problem, fields }
}

/** The error to show under a field, when the refusal names it (`name`, `grants[0].item_filter`…). */
export function fieldError(problem: Problem | null, ...names: string[]): string | undefined {
  if (!problem) return undefined
  const fields = (problem as Partial<Refusal>).fields ?? (problem.field ? { [problem.field]: problem.message } : {})
  for (const name of names)
    for (const [field, message] of Object.entries(fields))
      if (field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`)) return message
  return undefined
}

/** A status line announced politely (what just happened). */
export function Notice(props: { text: string | null }) {
  return (
    <p class="access-notice" role="status">
      {props.text ?? ''}
    </p>
  )
}
