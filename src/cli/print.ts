import type { Diagnostic, Install, PlanResult, ValidateResult, Verdict } from './types.js'

type Paint = (text: string) => string

/** ANSI colours, or none (the identity) when the output is not a terminal or NO_COLOR is set. */
export interface Palette {
  red: Paint
  green: Paint
  yellow: Paint
  dim: Paint
  bold: Paint
}

const sgr =
  (open: number, close: number): Paint =>
  (text) =>
    `\u001b[${open}m${text}\u001b[${close}m`
const plain: Paint = (text) => text

export function palette(enabled: boolean): Palette {
  return enabled
    ? { red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), dim: sgr(2, 22), bold: sgr(1, 22) }
    : { red: plain, green: plain, yellow: plain, dim: plain, bold: plain }
}

/** Colour when stdout is a terminal and NO_COLOR is unset or empty (no-color.org). */
export function wantsColour(isTTY: boolean | undefined, env: Record<string, string | undefined>): boolean {
  return isTTY === true && !env.NO_COLOR
}

const noColour = palette(false)

/** `file:line: severity code [brick] message` (the line left out when null, the brick when there is none). */
export function formatDiagnostic(file: string, d: Diagnostic, c: Palette = noColour): string {
  const where = d.line === null ? `${file}:` : `${file}:${d.line}:`
  const severity = d.severity === 'error' ? c.red(d.severity) : c.yellow(d.severity)
  const brick = d.brickId ? ` [${d.brickId}]` : ''
  return `${where} ${severity} ${d.code}${brick} ${d.message}`
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** `2 errors, 1 warning`, or null when there is no diagnostic. */
function countDiagnostics(diagnostics: Diagnostic[]): string | null {
  if (diagnostics.length === 0) return null
  const errors = diagnostics.filter((d) => d.severity === 'error').length
  const parts = [plural(errors, 'error'), plural(diagnostics.length - errors, 'warning')]
  return parts.filter((p) => !p.startsWith('0 ')).join(', ')
}

/** What the blueprint is, for headings: `Help desk 1.2.0 (help-desk)`. */
function title(blueprint: { id: string | null; name: string | null; version: string | null }): string {
  const name = [blueprint.name ?? blueprint.id ?? 'blueprint', blueprint.version].filter(Boolean).join(' ')
  return blueprint.id && blueprint.name ? `${name} (${blueprint.id})` : name
}

/** A validation: each diagnostic, then one line saying whether the document is sound. */
export function formatValidation(file: string, result: ValidateResult, c: Palette = noColour): string {
  const lines = result.diagnostics.map((d) => formatDiagnostic(file, d, c))
  const counted = countDiagnostics(result.diagnostics)
  lines.push(
    result.ok
      ? `${file}: ${c.green('ok')}: ${title(result.blueprint)}, ${plural(result.bricks.length, 'brick')}${counted ? ` (${counted})` : ''}`
      : `${file}: ${c.red('invalid')}: ${counted}`,
  )
  return `${lines.join('\n')}\n`
}

/** How each verdict is marked in a plan: made (+), changed (~), left (=), not applied (!, x), not chosen (.). */
const marks: Record<string, { sign: string; paint: keyof Palette }> = {
  CREATE: { sign: '+', paint: 'green' },
  RECREATE: { sign: '+', paint: 'green' },
  UPDATE: { sign: '~', paint: 'yellow' },
  ADOPT: { sign: '~', paint: 'yellow' },
  DRIFTED: { sign: '~', paint: 'yellow' },
  NOOP: { sign: '=', paint: 'dim' },
  SKIPPED: { sign: '.', paint: 'dim' },
  BLOCKED: { sign: '!', paint: 'red' },
  CLAIMED: { sign: 'x', paint: 'red' },
}

/** One verdict as a diff line: `~ UPDATE collection tickets (changed: fields)`, its warnings indented below. */
export function formatVerdict(v: Verdict, c: Palette = noColour): string {
  const mark = marks[v.verdict] ?? { sign: '?', paint: 'bold' }
  let line = c[mark.paint](`${mark.sign} ${v.verdict}`) + ` ${v.kind} ${v.brickId}`
  if (v.changedPaths.length > 0) line += ` (changed: ${v.changedPaths.join(', ')})`
  if (v.reason) line += `: ${v.reason}`
  if (needsConsent(v)) line += c.yellow(' [needs consent]')
  const warnings = v.warnings.map((w) => `    ${c.yellow('warning')} ${w.code}: ${w.message}`)
  return [line, ...warnings].join('\n')
}

/**
 * Consent is asked for what will be applied: a verdict never applied, or one with no call to make (a grants
 * brick planned NOOP still says requiresConsent), needs none, so it is neither shown nor sent.
 */
const notApplied = new Set(['NOOP', 'BLOCKED', 'SKIPPED', 'CLAIMED'])
const needsConsent = (v: Verdict) =>
  v.requiresConsent && !notApplied.has(v.verdict) && (v.actionIds === undefined || v.actionIds.length > 0)

/** The brick ids whose verdicts need the caller's consent before an install applies them. */
export function consentNeeded(plan: PlanResult): string[] {
  return plan.verdicts.filter(needsConsent).map((v) => v.brickId)
}

/**
 * A plan as a readable diff: diagnostics, a heading, one line per verdict, the orphans, missing secrets,
 * bricks needing consent, and a count of each verdict with whether it is installable.
 */
export function formatPlan(file: string, plan: PlanResult, c: Palette = noColour): string {
  const lines = plan.diagnostics.map((d) => formatDiagnostic(file, d, c))
  if (!plan.ok) {
    lines.push(`${file}: ${c.red('invalid')}: ${countDiagnostics(plan.diagnostics)}; nothing planned`)
    return `${lines.join('\n')}\n`
  }
  const against = plan.baseline ? `against install ${plan.baseline.installId} (${plan.baseline.version})` : 'new'
  lines.push(c.bold(`Plan for ${title(plan.blueprint)}, ${against}:`))
  for (const v of plan.verdicts) lines.push(formatVerdict(v, c))
  for (const o of plan.orphans) lines.push(`${c.red('- orphan')} ${o.kind} ${o.brickId} (${o.resourceRef})`)
  if (plan.orphans.length > 0) lines.push(c.dim('  (orphans are left in place: delete them yourself if unwanted)'))
  if (plan.missingSecrets.length > 0) {
    lines.push(
      `Missing secrets: ${plan.missingSecrets.join(', ')} (give each as PLINTH_SECRET_<name> in the environment)`,
    )
  }
  const consent = consentNeeded(plan)
  if (consent.length > 0) lines.push(`Needs consent: ${consent.join(', ')}`)
  const counts = new Map<string, number>()
  for (const v of plan.verdicts) counts.set(v.verdict, (counts.get(v.verdict) ?? 0) + 1)
  const summary = [...counts].map(([verdict, n]) => `${n} ${verdict}`)
  if (plan.orphans.length > 0) summary.push(plural(plan.orphans.length, 'orphan'))
  const verdict = plan.installable ? c.green('installable') : c.red('not installable')
  lines.push(`${summary.length > 0 ? summary.join(', ') : 'no bricks'}: ${verdict}`)
  return `${lines.join('\n')}\n`
}

/** An error a resource row carries: a string, `{ code, message }`, or anything else as JSON. */
function describeError(error: unknown): string {
  if (typeof error === 'string') return error
  const e = error as { code?: unknown; message?: unknown } | null
  if (e && typeof e.message === 'string') return typeof e.code === 'string' ? `${e.code}: ${e.message}` : e.message
  return JSON.stringify(error)
}

const statusPaint: Record<string, keyof Palette> = {
  complete: 'green',
  settled: 'green',
  partial: 'red',
  failed: 'red',
  skipped: 'yellow',
  pending: 'yellow',
}

/** An install: its status, then one line per resource (outcome, verdict, kind, brick, resource, error). */
export function formatInstall(install: Install, c: Palette = noColour): string {
  const paint = (status: string) => c[statusPaint[status] ?? 'bold'](status)
  const name = [install.name || install.blueprintId, install.version].filter(Boolean).join(' ')
  const lines = [`Install ${install.id} of ${name}: ${paint(install.status)}`]
  const width = Math.max(0, ...install.resources.map((r) => r.status.length))
  for (const r of install.resources) {
    let line = `  ${paint(r.status.padEnd(width))} ${r.verdict} ${r.brickKind} ${r.brickId}`
    if (r.resourceRef) line += ` (${r.resourceRef})`
    if (r.error !== null && r.error !== undefined) line += `: ${describeError(r.error)}`
    lines.push(line)
  }
  return `${lines.join('\n')}\n`
}
