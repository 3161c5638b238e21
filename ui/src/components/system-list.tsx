import type { ApiSchemas } from '@plinth/client'
import type { ComponentChildren } from 'preact'
import { useMemo } from 'preact/hooks'
import { client, type Problem } from '../api.js'
import { Button, ProblemNote } from './form.js'
import { useAsync } from './use-async.js'

export type Schemas = ApiSchemas

/** The list envelope of the paged endpoints (files, audit log, email log, tool calls, notifications). */
export interface PagedList<T> {
  data: T[]
  total: number
  page: number
  limit: number
  hasMore: boolean
}

/** A time as a person reads it. `unit` says what a number is (the API uses seconds, milliseconds and ISO). */
export function formatTime(value: number | string | null | undefined, unit: 's' | 'ms' = 's'): string {
  if (value === null || value === undefined || value === '') return '—'
  const date = typeof value === 'number' ? new Date(unit === 's' ? value * 1000 : value) : new Date(value)
  if (Number.isNaN(date.getTime())) return String(value)
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/** A time element for a table cell: readable text, the exact instant in `datetime`. */
export function Time(props: { value: number | string | null | undefined; unit?: 's' | 'ms' }) {
  const { value, unit = 's' } = props
  if (value === null || value === undefined || value === '') return <span>—</span>
  const date = typeof value === 'number' ? new Date(unit === 's' ? value * 1000 : value) : new Date(value)
  if (Number.isNaN(date.getTime())) return <span>{String(value)}</span>
  return <time dateTime={date.toISOString()}>{formatTime(value, unit)}</time>
}

/** Bytes as B, KB, MB, GB (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—'
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

/** Previous / next for a paged list, with where we are. */
export function Pager(props: {
  page: number
  limit: number
  total: number
  hasMore: boolean
  onPage: (page: number) => void
  label?: string
}) {
  const pages = Math.max(1, Math.ceil(props.total / Math.max(1, props.limit)))
  if (props.page <= 1 && !props.hasMore) return null
  return (
    <nav class="system-pager" aria-label={props.label ?? 'Pages'}>
      <Button disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </Button>
      <span>
        Page {props.page} of {pages} ({props.total} in all)
      </span>
      <Button disabled={!props.hasMore} onClick={() => props.onPage(props.page + 1)}>
        Next
      </Button>
    </nav>
  )
}

/** What a screen shows while it loads, when it failed, or its content; a refusal of the role in short words. */
export function Loaded<T>(props: {
  value: T | undefined
  problem: Problem | null
  loading: boolean
  children: (value: T) => ComponentChildren
}) {
  if (props.problem) {
    if (props.problem.status === 403) return <p class="system-note">Your role does not allow you to see this.</p>
    return <ProblemNote problem={props.problem} />
  }
  if (props.value === undefined)
    return props.loading ? (
      <p class="empty" role="status">
        Loading…
      </p>
    ) : null
  return <>{props.children(props.value)}</>
}

/** JSON shown as readable, pre-formatted text. */
export function Json(props: { value: unknown }) {
  return <pre class="system-json">{JSON.stringify(props.value, null, 2)}</pre>
}

/**
 * A table's scrolling frame (narrow screens scroll the table inside it): a named region that takes focus, so
 * a keyboard can scroll it too.
 */
export function TableWrap(props: { label: string; children: ComponentChildren }) {
  return (
    // tabIndex 0: a scrollable region must be reachable by keyboard (axe: scrollable-region-focusable)
    <div class="table-wrap" role="region" aria-label={props.label} tabIndex={0}>
      {props.children}
    </div>
  )
}

/**
 * The project's people by id (name, else email or username), to show who an id is; empty when the role
 * may not list users (ids are shown as they are then). The first 100 users: a larger project shows ids
 * past them.
 */
export function useUserNames(enabled = true): Record<string, string> {
  const users = useAsync(
    async () =>
      enabled
        ? (
            await client.transport.request<{ data: Schemas['User'][] }>('GET', '/api/v1/users', {
              query: { limit: 100 },
            })
          ).data
        : [],
    [enabled],
  )
  return useMemo(
    () => Object.fromEntries((users.value ?? []).map((u) => [u.id, u.name || u.email || u.username || u.id])),
    [users.value],
  )
}

/** Who did something: `user Ada Lovelace` (the id kept in the title), or the kind and id as the log gives. */
export function Actor(props: { type: string; id: string | null; names: Record<string, string> }) {
  const name = props.id && props.type === 'user' ? props.names[props.id] : undefined
  if (name)
    return (
      <span title={props.id ?? undefined}>
        {props.type} <strong>{name}</strong>
      </span>
    )
  return (
    <span>
      {props.type}
      {props.id ? <span class="system-mono"> {props.id}</span> : null}
    </span>
  )
}
