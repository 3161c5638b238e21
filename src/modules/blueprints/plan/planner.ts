import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { selectedBrickIds } from '../document/assemblies.js'
import { compileBody, forEachString } from '../document/compile.js'
import { diagnostic, type Diagnostic } from '../document/diagnostics.js'
import { dependencyOrder } from '../document/graph.js'
import { paramValueProblem, type ParamDecl } from '../document/params.js'
import type { Brick, BlueprintReport } from '../document/read.js'
import { compareSemver, parseSemver } from '../document/semver.js'
import { brickKindNames } from '../kinds/index.js'
import { emptyLedger, resourceKindOf, type HeldResource, type LedgerView } from '../ledger/view.js'
import { changedPaths, contentHash, withoutPaths } from '../providers/canonical.js'
import type { BrickProvider, Finding, LiveResource } from '../providers/provider.js'
import type { PlanAction, PlanResult, Verdict } from './verdicts.js'
import type { ProposedCall } from '../providers/provider.js'

export interface PlanInput {
  /** Non-secret parameter values; undeclared keys are ignored. */
  params?: Readonly<Record<string, unknown>>
  /** The assemblies chosen (all when absent; required ones always). */
  assemblies?: readonly string[]
  /** Secret parameters already held by the project. */
  secretsProvided?: readonly string[]
}

const secretRef = /\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}/g

/**
 * The parameter values a plan or install uses. Throws invalid_request naming the parameter (never its
 * value) for a value given to a secret parameter or one its type refuses.
 */
export function checkParamValues(params: readonly ParamDecl[], values: Readonly<Record<string, unknown>>): void {
  for (const param of params) {
    if (!Object.hasOwn(values, param.name)) continue
    if (param.type === 'secret')
      throw new AppError('invalid_request', `${param.name} is a secret parameter: its value is never sent in a plan`, {
        param: param.name,
      })
    const problem = paramValueProblem(param, values[param.name])
    if (problem) throw new AppError('invalid_request', `${param.name}: ${problem}`, { param: param.name })
  }
}

/**
 * Plans a validated document against the project as the caller sees it (issue 30 item 4, decisions 069 and
 * 070): for each chosen brick in dependency order, its desired shape through its kind's provider, the live
 * resource the ledger or its natural key names, a verdict, and the calls that would apply it. Reads only.
 */
export async function planBlueprint(
  providers: ReadonlyMap<string, BrickProvider>,
  actor: Principal,
  report: BlueprintReport,
  input: PlanInput,
  ledger: LedgerView = emptyLedger,
): Promise<PlanResult> {
  return (await planBricks(providers, actor, report, input, ledger)).result
}

/** One brick as planned: what an install applies and records. */
export interface PlannedBrick {
  brick: Brick
  verdict: Verdict
  calls: ProposedCall[]
  /** The desired create shape (parameters substituted, secrets as placeholders); null when it has none. */
  desired: Record<string, unknown> | null
  /** The live resource the verdict is about, null when there is none. */
  live: LiveResource | null
  /** The ledger's row for the brick, when the blueprint holds one. */
  held: HeldResource | null
}

/** The plan, and per brick what an install needs to apply it. */
export async function planBricks(
  providers: ReadonlyMap<string, BrickProvider>,
  actor: Principal,
  report: BlueprintReport,
  input: PlanInput,
  ledger: LedgerView,
): Promise<{ result: PlanResult; planned: PlannedBrick[] }> {
  const envelope = report.envelope
  const params = envelope?.params ?? []
  const values = input.params ?? {}
  checkParamValues(params, values)
  const result: PlanResult = {
    ok: report.ok,
    installable: false,
    diagnostics: [...report.diagnostics],
    blueprint: { id: envelope?.id ?? null, name: envelope?.name ?? null, version: envelope?.version ?? null },
    coverage: {
      supported: brickKindNames.filter((k) => providers.has(k)),
      unsupported: brickKindNames.filter((k) => !providers.has(k)),
    },
    baseline: ledger.baseline,
    verdicts: [],
    orphans: [],
    actions: [],
    missingSecrets: [],
  }
  const planned: PlannedBrick[] = []
  if (!report.ok || !envelope) return { result, planned }

  const downgrade = olderThanInstalled(envelope.version, ledger.baseline?.version)
  if (downgrade !== null) result.diagnostics.push(diagnostic('plan.version_downgrade', downgrade))
  const chosen = selectedBrickIds(
    envelope.assemblies,
    input.assemblies,
    report.bricks.map((b) => b.id),
  )
  const secrets = new Set<string>()
  const problems: Diagnostic[] = []
  for (const brick of dependencyOrder(report.bricks)) {
    const held = ledger.rows.get(brick.id) ?? null
    if (!chosen.has(brick.id)) {
      result.verdicts.push(verdictOf(brick, 'SKIPPED', { resourceRef: held?.ref ?? null }))
      continue
    }
    const compiled = compileBody(brick.body, params, values)
    forEachString(compiled.value, (text) => {
      for (const [, name] of text.matchAll(secretRef)) secrets.add(name!)
    })
    const one = await planBrick(providers, actor, report, brick, compiled, problems, held, ledger)
    if (!one) continue
    for (const call of one.calls) {
      const action: PlanAction = { id: `a${result.actions.length + 1}`, brickId: brick.id, ...call }
      result.actions.push(action)
      one.verdict.actionIds.push(action.id)
    }
    result.verdicts.push(one.verdict)
    planned.push({ brick, held, desired: null, live: null, ...one })
  }
  const inDocument = new Set(report.bricks.map((b) => b.id))
  for (const row of ledger.rows.values())
    if (!inDocument.has(row.brickId) && row.ref !== null)
      result.orphans.push({ brickId: row.brickId, kind: row.brickKind, resourceRef: row.ref })
  result.missingSecrets = [...secrets].filter((name) => !(input.secretsProvided ?? []).includes(name)).sort()
  if (problems.length > 0) {
    // A body its create route refuses fails the document: no verdicts, no actions (spec: ok false).
    const failed = {
      ...result,
      ok: false,
      diagnostics: [...result.diagnostics, ...problems],
      verdicts: [],
      actions: [],
    }
    return { result: failed, planned: [] }
  }
  result.installable = result.verdicts.every((v) => v.verdict !== 'BLOCKED')
  return { result, planned }
}

/** The plan.version_downgrade message when `version` is older than the installed one. */
function olderThanInstalled(version: string | null, installed: string | undefined): string | null {
  if (installed === undefined || version === null) return null
  const [a, b] = [parseSemver(version), parseSemver(installed)]
  return a && b && compareSemver(a, b) < 0 ? `Version ${version} is older than the installed ${installed}` : null
}

function verdictOf(brick: Brick, verdict: Verdict['verdict'], extra: Partial<Verdict> = {}): Verdict {
  const grants = brick.kind === 'grants'
  return {
    brickId: brick.id,
    kind: brick.kind,
    verdict,
    reason: null,
    changedPaths: [],
    warnings: [],
    resourceRef: null,
    contentHash: null,
    actionIds: [],
    autoApply: !grants,
    requiresConsent: grants,
    ...extra,
  }
}

const blocked = (brick: Brick, finding: Finding, extra: Partial<Verdict> = {}) => ({
  verdict: verdictOf(brick, 'BLOCKED', { reason: finding.code, warnings: [finding], ...extra }),
  calls: [],
})

const readRefused = (err: unknown) => isAppError(err) && (err.code === 'forbidden' || err.code === 'unauthorized')

async function planBrick(
  providers: ReadonlyMap<string, BrickProvider>,
  actor: Principal,
  report: BlueprintReport,
  brick: Brick,
  compiled: { value: unknown; unresolved: readonly string[] },
  problems: Diagnostic[],
  held: HeldResource | null,
  ledger: LedgerView,
) {
  const provider = providers.get(brick.kind)
  if (!provider) return blocked(brick, { code: 'plan.no_reader', message: `Kind ${brick.kind} cannot be read back` })
  const staticBlock = report.blocked.find((b) => b.brickId === brick.id)
  if (staticBlock) return blocked(brick, { code: staticBlock.reason, message: staticBlock.message })
  if (compiled.unresolved.length > 0)
    return blocked(brick, {
      code: 'params.unresolved',
      message: `No value for ${compiled.unresolved.join(', ')} (and no default)`,
    })
  let desired: Record<string, unknown>
  try {
    desired = provider.desired(compiled.value)
  } catch (err) {
    if (!isAppError(err)) throw err
    problems.push(
      diagnostic('brick.invalid_body', `its ${brick.kind} call would be refused: ${err.message}`, brick.line, brick.id),
    )
    return null
  }
  const compared = (shape: Record<string, unknown>) => withoutPaths(provider.comparable(shape), provider.notCompared)
  const hash = contentHash(compared(desired))
  let looked: Looked
  try {
    const check = await provider.check?.(actor, desired)
    if (check) return blocked(brick, check, { contentHash: hash })
    looked = await lookUp(provider, actor, desired, held)
  } catch (err) {
    if (!readRefused(err)) throw err
    return blocked(
      brick,
      { code: 'read.permission_missing', message: `Reading ${brick.kind} resources needs a permission you lack` },
      { contentHash: hash },
    )
  }
  const base = { desired, contentHash: hash }
  if (looked.kind === 'ambiguous') {
    const code = brick.kind === 'nav' ? 'live.ambiguous_by_label' : 'live.ambiguous_by_slug'
    return blocked(brick, { code, message: `${looked.count} live resources match this brick` }, { contentHash: hash })
  }
  const live = looked.live
  const warnings = (await provider.warnings?.(actor, desired, live)) ?? []
  if (looked.kind === 'gone')
    return {
      ...base,
      verdict: verdictOf(brick, 'RECREATE', { warnings, contentHash: hash, resourceRef: held?.ref ?? null }),
      calls: provider.calls(desired, null),
    }
  if (live === null)
    return {
      ...base,
      verdict: verdictOf(brick, 'CREATE', { warnings, contentHash: hash }),
      calls: provider.calls(desired, null),
    }
  const ours = held !== null
  if (!ours) {
    const claimant = await ledger.claimant(resourceKindOf(brick.kind), live.ref)
    if (claimant !== undefined)
      return {
        ...base,
        live,
        verdict: verdictOf(brick, 'CLAIMED', {
          warnings: [
            {
              code: 'ledger.claimed',
              message: `Blueprint ${claimant.blueprintId} (${claimant.namespace}) installed this ${brick.kind}`,
            },
          ],
          resourceRef: live.ref,
          contentHash: hash,
          autoApply: false,
          requiresConsent: false,
        }),
        calls: [],
      }
  }
  const changed = changedPaths(compared(desired), compared(live.shape))
  const fixed = changed.find((path) => provider.immutable.includes(path.split('.')[0]!))
  if (fixed !== undefined) {
    const code = fixed === 'collection' ? 'live.collection_mismatch' : 'plan.no_update_path'
    return blocked(
      brick,
      { code, message: `The live ${brick.kind} differs in ${fixed}, which no update changes` },
      { changedPaths: changed, resourceRef: live.ref, contentHash: hash },
    )
  }
  if (changed.length > 0 && !provider.update)
    return blocked(
      brick,
      { code: 'plan.no_update_path', message: `A ${brick.kind} cannot be changed in place` },
      { changedPaths: changed, resourceRef: live.ref, contentHash: hash },
    )
  const calls = changed.length > 0 ? provider.calls(desired, live) : []
  const grants = brick.kind === 'grants'
  const verdict = (name: Verdict['verdict'], consent: boolean) =>
    verdictOf(brick, name, {
      changedPaths: changed,
      warnings,
      resourceRef: live.ref,
      contentHash: hash,
      autoApply: !consent && !grants,
      requiresConsent: consent || grants,
    })
  if (!ours)
    // Not the install's own: adopting it, and changing it, is the installer's call.
    return { ...base, live, calls, verdict: verdict('ADOPT', changed.length > 0) }
  if (changed.length === 0) return { ...base, live, calls, verdict: verdict('NOOP', false) }
  // Changed since the ledger read it back (by hand): overwriting that is the installer's call.
  const drifted = held.hash !== null && looked.hash !== held.hash
  return { ...base, live, calls, verdict: verdict(drifted ? 'DRIFTED' : 'UPDATE', drifted) }
}

type Looked =
  | { kind: 'found'; live: LiveResource | null; hash: string | null }
  | { kind: 'gone'; live: null }
  | { kind: 'ambiguous'; count: number }

/**
 * The live resource a brick is about: the one the ledger holds (read by its ref: gone when it is not there),
 * else the one its natural key names. A set (seed records) is read by the ledger's rows for drift, and by
 * the brick's for what to change.
 */
async function lookUp(
  provider: BrickProvider,
  actor: Principal,
  desired: Record<string, unknown>,
  held: HeldResource | null,
): Promise<Looked> {
  const compared = (shape: Record<string, unknown>) => withoutPaths(provider.comparable(shape), provider.notCompared)
  if (held?.ref) {
    const live = await readHeld(provider, actor, held.ref, held.canonical)
    if (!live) return { kind: 'gone', live: null }
    const hash = contentHash(compared(live.shape))
    if (!live.members) return { kind: 'found', live, hash }
    const now = await provider.find(actor, desired)
    return now.length > 1 ? { kind: 'ambiguous', count: now.length } : { kind: 'found', live: now[0] ?? live, hash }
  }
  const found = await findLive(provider, actor, desired)
  if (found.length > 1) return { kind: 'ambiguous', count: found.length }
  const live = found[0] ?? null
  return { kind: 'found', live, hash: live && contentHash(compared(live.shape)) }
}

/** The resource the ledger holds; gone with its collection too (seed rows of a collection dropped by hand). */
async function readHeld(
  provider: BrickProvider,
  actor: Principal,
  ref: string,
  known: Record<string, unknown> | null,
): Promise<LiveResource | null> {
  try {
    return await provider.read(actor, ref, known ?? undefined)
  } catch (err) {
    if (isAppError(err) && err.code === 'collection_not_found') return null
    throw err
  }
}

/** What a brick's natural key names; a collection an earlier brick makes is not there yet (seed rows). */
async function findLive(provider: BrickProvider, actor: Principal, desired: Record<string, unknown>) {
  try {
    return await provider.find(actor, desired)
  } catch (err) {
    if (isAppError(err) && err.code === 'collection_not_found') return []
    throw err
  }
}
