import type { Diagnostic } from '../document/diagnostics.js'
import type { Finding, ProposedCall } from '../providers/provider.js'

/**
 * The nine verdicts (spec: five shown, four ours, decision 069). CREATE: nothing there, the brick makes it.
 * NOOP: the install's own resource, as the brick says. UPDATE: the install's own resource, changed to the
 * brick. ADOPT: a resource of that name the ledger does not hold (changedPaths says what the brick would
 * change). BLOCKED: not installable as it stands (reason). DRIFTED: the install's own resource, changed by
 * hand since it was installed. RECREATE: the install's own resource, gone. SKIPPED: in an assembly not
 * chosen. CLAIMED: another blueprint's install holds it.
 */
export const verdictNames = [
  'CREATE',
  'NOOP',
  'UPDATE',
  'ADOPT',
  'BLOCKED',
  'DRIFTED',
  'RECREATE',
  'SKIPPED',
  'CLAIMED',
] as const
export type VerdictName = (typeof verdictNames)[number]

export interface Verdict {
  brickId: string
  kind: string
  verdict: VerdictName
  /** The BLOCKED reason (spec codes), null otherwise. */
  reason: string | null
  /** Where the brick differs from the live resource (create-shape paths). */
  changedPaths: string[]
  warnings: Finding[]
  /** The live resource's ref (id or name), null when there is none. */
  resourceRef: string | null
  /** sha256 of the brick's canonical comparable shape; null when it could not be made. */
  contentHash: string | null
  actionIds: string[]
  /** Whether applying it needs no one's word (grants never). */
  autoApply: boolean
  requiresConsent: boolean
}

export interface PlanAction extends ProposedCall {
  id: string
  brickId: string
}

export interface PlanResult {
  ok: boolean
  installable: boolean
  diagnostics: Diagnostic[]
  blueprint: { id: string | null; name: string | null; version: string | null }
  coverage: { supported: string[]; unsupported: string[] }
  /** The earlier install compared against, or null. */
  baseline: null | { installId: string; version: string; docHash: string }
  verdicts: Verdict[]
  orphans: { brickId: string; kind: string; resourceRef: string }[]
  actions: PlanAction[]
  missingSecrets: string[]
}
