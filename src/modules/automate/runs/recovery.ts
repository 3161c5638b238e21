import type { StepNode } from '../../operations/index.js'
import type { Resume } from './executor.js'
import type { StepLogRow } from './run-rows.js'
import { isTruncated } from './step-logs.js'

/**
 * What becomes of a run taken over from an instance that stopped renewing its lease (decision 054), read
 * from the step logs it left (each written as its step ended; a step that writes, also as it began):
 * - `resume`: nothing that wrote is unfinished; it runs again from its first top-level step that did not
 *   complete (from the start when none did), with the outputs of those before it. Logs of the unfinished
 *   step (reads and transforms nested in it) are dropped (`keepBelow`).
 * - `interrupted`: a step that writes had begun and not completed in order (it may have written, and would
 *   run twice): the run ends failed `interrupted`, naming it; a retry starts it afresh.
 */
export type Recovery =
  | { readonly kind: 'resume'; readonly resume: Resume; readonly keepBelow: number }
  | { readonly kind: 'interrupted'; readonly step: string; readonly position: number }

type Effects = (type: string) => 'none' | 'reads' | 'writes'

export function recoveryOf(rows: readonly StepLogRow[], steps: readonly StepNode[], effectsOf: Effects): Recovery {
  const ordered = [...rows].sort((a, b) => Number(a.position) - Number(b.position))
  const begun = ordered.find((r) => r.status === 'running')
  if (begun) return { kind: 'interrupted', step: begun.step_key, position: Number(begun.position) }
  // The last log of each top-level step (a flow-level retry may have logged one twice).
  const topLogs = new Map<string, StepLogRow>()
  for (const row of ordered) if (topKey(row.step_key) === row.step_key) topLogs.set(row.step_key, row)
  const outputs: Record<string, unknown> = {}
  let from = 0
  for (; from < steps.length; from++) {
    const row = topLogs.get(steps[from]!.key)
    if (!row || (row.status !== 'completed' && row.status !== 'skipped')) break
    const output = row.output === null ? null : (JSON.parse(row.output) as unknown)
    // Its output was cut when logged: later steps could not read it as it was, so this step runs again.
    if (isTruncated(output)) break
    outputs[steps[from]!.key] = output
  }
  const done = new Set(steps.slice(0, from).map((s) => s.key))
  const leftover = ordered.filter((r) => !done.has(topKey(r.step_key)))
  const wrote = leftover.find((r) => effectsOf(r.type) === 'writes' && r.input !== null)
  if (wrote) return { kind: 'interrupted', step: wrote.step_key, position: Number(wrote.position) }
  const kept = ordered.filter((r) => done.has(topKey(r.step_key)))
  const keepBelow =
    leftover.length > 0
      ? Number(leftover[0]!.position)
      : kept.length > 0
        ? Number(kept[kept.length - 1]!.position) + 1
        : 0
  return { kind: 'resume', resume: { from, outputs, nextPosition: keepBelow }, keepBelow }
}

/** The top-level step a logged key belongs to: `loop[2].write` → `loop`. */
function topKey(key: string): string {
  const cut = key.search(/[.[]/)
  return cut === -1 ? key : key.slice(0, cut)
}
