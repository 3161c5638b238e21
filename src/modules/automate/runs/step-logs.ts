import { maskCredentials, needsMasking } from '../flows/masking.js'
import type { StepRecord } from './executor.js'
import type { StepLogRow } from './run-rows.js'

/** The most of a step's input or of its output a step log keeps (each), as JSON text. */
export const maxStoredStepBytes = 256 * 1024

/** What a step log holds instead of an input or output over the cap: the marker, the original size and a start. */
export interface Truncated {
  readonly $truncated: true
  readonly bytes: number
  readonly preview: string
}

/** A step's log row: its resolved config with credentials masked, input and output capped (maxStoredStepBytes). */
export function stepLogRow(runId: string, projectId: string, r: StepRecord): StepLogRow {
  return {
    run_id: runId,
    position: r.position,
    project_id: projectId,
    step_key: r.key,
    type: r.type,
    status: r.status,
    input: r.input === null ? null : capped(JSON.stringify(maskedInput(r.input, r.type))),
    output: r.output === undefined ? null : capped(JSON.stringify(r.output)),
    error: r.error ? JSON.stringify(r.error) : null,
    logs:
      r.logs.length > 0 || r.unresolved.length > 0 ? JSON.stringify({ lines: r.logs, unresolved: r.unresolved }) : null,
    attempts: r.attempts,
    started_at: r.startedAt,
    duration_ms: r.durationMs,
  }
}

/** A step's input as a run's detail shows it (a dry run's answer): credentials masked, capped like a step log. */
export function shownInput(r: Pick<StepRecord, 'input' | 'type'>): unknown {
  if (r.input === null) return null
  const text = capped(JSON.stringify(maskedInput(r.input, r.type)))
  return text === null ? null : JSON.parse(text)
}

/** True when a stored input or output was cut (a run cannot be resumed from it). */
export function isTruncated(stored: unknown): stored is Truncated {
  return typeof stored === 'object' && stored !== null && (stored as Partial<Truncated>).$truncated === true
}

function capped(text: string | undefined): string | null {
  if (text === undefined) return null
  // Characters stand for bytes here: exact enough for a cap, and never splits the JSON we build.
  if (text.length <= maxStoredStepBytes) return text
  const marker: Truncated = { $truncated: true, bytes: Buffer.byteLength(text), preview: text.slice(0, 1024) }
  return JSON.stringify(marker)
}

/** A step's resolved config with its credentials masked (flows/masking.ts). */
function maskedInput(input: unknown, type: string): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input
  const config = input as Record<string, unknown>
  return needsMasking(config, type) ? maskCredentials(config, type) : config
}
