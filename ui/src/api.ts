import { createClient, PlinthError } from '@plinth/client'

/**
 * The UI's one client: the public API through @plinth/client, with a cookie session (decision 078). The
 * UI has no other way into the server.
 */
export const client = createClient({ url: location.origin, cookieSession: true })

/** A failure as a person reads it: a sentence, and the field it concerns when the server named one. */
export interface Problem {
  readonly message: string
  readonly field?: string | undefined
  readonly code: string
  readonly status: number | null
}

const plain: Record<string, string> = {
  unauthorized: 'You are signed out. Sign in again.',
  forbidden: 'Your role does not allow this.',
  not_found: 'It is not there any more.',
  collection_not_found: 'That collection does not exist.',
  record_not_found: 'That record does not exist.',
  conflict: 'Someone changed this in the meantime.',
  version_conflict: 'Someone changed this record in the meantime.',
  rate_limited: 'Too many attempts. Wait a moment and try again.',
  payload_too_large: 'That is too large to send.',
  network: 'The server cannot be reached. Check the connection and try again.',
}

/**
 * The field an envelope's details point at: `field`, `fields[0]`, `path` or `at` (automation, navigation),
 * or the first issue's `location` or `path`.
 */
function fieldOf(details: Record<string, unknown>): string | undefined {
  for (const key of ['field', 'path', 'at', 'key'] as const) if (typeof details[key] === 'string') return details[key]
  if (Array.isArray(details.fields) && typeof details.fields[0] === 'string') return details.fields[0]
  const issues = details.issues
  if (Array.isArray(issues) && issues[0] && typeof issues[0] === 'object') {
    const issue = issues[0] as { location?: unknown; path?: unknown }
    if (typeof issue.location === 'string') return issue.location.replace(/^body\./, '')
    if (typeof issue.path === 'string') return issue.path
  }
  return undefined
}

/** Turns anything thrown into a Problem; the server's own message is kept (it is written for people). */
export function problemOf(err: unknown): Problem {
  if (err instanceof PlinthError) {
    const details = (err.details ?? {}) as Record<string, unknown>
    const status = err.status ?? null
    const code = err.code
    if (status === null) return { message: plain.network!, code: 'network', status }
    const own = err.message && !/answered \d+$/.test(err.message) ? err.message : undefined
    return { message: own ?? plain[code] ?? `The server refused (${code}).`, field: fieldOf(details), code, status }
  }
  return { message: err instanceof Error ? err.message : String(err), code: 'client', status: null }
}
