import type { ComponentChildren } from 'preact'
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

/** The error to show under a field, when the problem names it (`name`, `grants[0].item_filter`…). */
export function fieldError(problem: Problem | null, ...names: string[]): string | undefined {
  if (!problem?.field) return undefined
  const field = problem.field
  return names.some((n) => field === n || field.startsWith(`${n}.`) || field.startsWith(`${n}[`))
    ? problem.message
    : undefined
}

/** A status line announced politely (what just happened). */
export function Notice(props: { text: string | null }) {
  return (
    <p class="access-notice" role="status">
      {props.text ?? ''}
    </p>
  )
}
