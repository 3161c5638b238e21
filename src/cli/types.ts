/**
 * What the blueprint endpoints answer, as the CLI reads it. Written here rather than imported from the
 * server's schemas: the CLI is a client of a running instance (possibly another version), so it reads only
 * what it prints and tolerates what it does not know (an unknown verdict is printed as it comes).
 */

export interface Diagnostic {
  severity: string
  code: string
  message: string
  line: number | null
  brickId: string | null
}

export interface Finding {
  code: string
  message: string
}

export interface ValidateResult {
  ok: boolean
  diagnostics: Diagnostic[]
  blueprint: {
    id: string | null
    name: string | null
    version: string | null
    params?: { name: string; type: string; required: boolean; secret: boolean }[]
  }
  bricks: { id: string; kind: string }[]
}

export interface Verdict {
  brickId: string
  kind: string
  verdict: string
  reason: string | null
  changedPaths: string[]
  warnings: Finding[]
  resourceRef: string | null
  /** The plan's calls that apply it (none for NOOP, BLOCKED, SKIPPED, CLAIMED). */
  actionIds?: string[]
  requiresConsent: boolean
}

export interface PlanResult {
  ok: boolean
  installable: boolean
  diagnostics: Diagnostic[]
  blueprint: { id: string | null; name: string | null; version: string | null }
  baseline: null | { installId: string; version: string }
  verdicts: Verdict[]
  orphans: { brickId: string; kind: string; resourceRef: string }[]
  missingSecrets: string[]
}

export interface InstallResource {
  brickId: string
  brickKind: string
  verdict: string
  resourceRef: string | null
  status: string
  error: unknown
}

export interface Install {
  id: string
  blueprintId: string
  name: string
  version: string
  status: string
  resources: InstallResource[]
}
