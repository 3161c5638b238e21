/**
 * What a blueprint document is told about itself: stable codes, each with one severity. The spec's table
 * (automation-and-blueprints § Blueprint document) plus the codes decision 068 adds for what that table
 * leaves without a name (bad YAML, an undeclared key, a malformed parameter or assembly, an info string that
 * does not parse). An error makes the document fail (`ok: false`); a warning does not.
 */
export const diagnosticSeverity = {
  // The spec's table.
  'envelope.missing': 'error',
  'envelope.unterminated': 'error',
  'envelope.unsupported_format': 'error',
  'envelope.removed_key': 'warning',
  'envelope.unsupported_syntax': 'error',
  'envelope.invalid_id': 'error',
  'envelope.invalid_version': 'error',
  'params.no_namespace': 'error',
  'params.multiple_namespace': 'error',
  'params.secret_default': 'error',
  'params.unknown_reference': 'error',
  'naming.missing_namespace': 'error',
  'brick.unknown_kind': 'error',
  'brick.missing_id': 'error',
  'brick.duplicate_id': 'error',
  'brick.unterminated': 'error',
  'brick.invalid_json': 'error',
  'brick.unknown_dependency': 'error',
  'brick.dependency_cycle': 'error',
  'assemblies.unknown_brick': 'error',
  'assemblies.orphan_brick': 'warning',
  'access.preset_required': 'error',
  'access.preset_not_private': 'error',
  'plan.version_downgrade': 'warning',
  // The records brick's refusals (§ Records brick body).
  'brick.no_row_identity': 'error',
  'brick.duplicate_row_identity': 'error',
  'brick.ragged_rows': 'error',
  'brick.too_many_rows': 'error',
  'brick.late_bound_ref': 'error',
  'brick.secret_in_seed': 'error',
  // A BLOCKED reason the plan gives; validate shows it as a warning, since the document itself is sound.
  'brick.late_bound_lens': 'warning',
  // Decision 068: codes for what the spec's table leaves unnamed.
  'envelope.too_large': 'error',
  'envelope.invalid_yaml': 'error',
  'envelope.unknown_key': 'error',
  'envelope.invalid_name': 'error',
  'params.invalid': 'error',
  'params.invalid_value': 'error',
  'assemblies.invalid': 'error',
  'brick.invalid_info': 'error',
  'brick.invalid_body': 'error',
  'brick.nav_not_top_level': 'error',
  'diagnostics.truncated': 'warning',
} as const

export type DiagnosticCode = keyof typeof diagnosticSeverity
export type Severity = 'error' | 'warning'

/** One finding: where (a 1-based line of the document, or null) and which brick (or null). */
export interface Diagnostic {
  readonly severity: Severity
  readonly code: DiagnosticCode
  readonly message: string
  readonly line: number | null
  readonly brickId: string | null
}

/** A diagnostic with the severity its code carries. */
export function diagnostic(
  code: DiagnosticCode,
  message: string,
  line: number | null = null,
  brickId: string | null = null,
): Diagnostic {
  return { severity: diagnosticSeverity[code], code, message, line, brickId }
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error')
}

/** The most diagnostics one answer lists: a hostile 1 MB document could otherwise make one for every few bytes. */
export const maxDiagnostics = 1000

/**
 * Diagnostics in document order (those without a line last, in the order they were found), at most
 * `max`; past that, one `diagnostics.truncated` warning says how many were left out.
 */
export function orderDiagnostics(diagnostics: readonly Diagnostic[], max = maxDiagnostics): Diagnostic[] {
  const lineOf = (d: Diagnostic) => d.line ?? Number.MAX_SAFE_INTEGER
  const sorted = diagnostics
    .map((d, i) => ({ d, i }))
    .sort((a, b) => lineOf(a.d) - lineOf(b.d) || a.i - b.i)
    .map(({ d }) => d)
  if (sorted.length <= max) return sorted
  const left = sorted.length - max
  return [...sorted.slice(0, max), diagnostic('diagnostics.truncated', `${left} more diagnostics are not listed`)]
}
