import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { selectedBrickIds } from '../document/assemblies.js'
import { compileBody, forEachString } from '../document/compile.js'
import { diagnostic, type Diagnostic } from '../document/diagnostics.js'
import { dependencyOrder } from '../document/graph.js'
import { paramValueProblem, type ParamDecl } from '../document/params.js'
import type { Brick, BlueprintReport } from '../document/read.js'
import { brickKindNames } from '../kinds/index.js'
import { changedPaths, contentHash, withoutPaths } from '../providers/canonical.js'
import type { BrickProvider, Finding, LiveResource } from '../providers/provider.js'
import type { PlanAction, PlanResult, Verdict } from './verdicts.js'

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
 * Plans a validated document against the project as the caller sees it (issue 30 item 4): for each chosen
 * brick in dependency order, its desired shape through its kind's provider, the live resource its natural
 * key names, a verdict, and the calls that would apply it. Reads only; writes nothing.
 */
export async function planBlueprint(
  providers: ReadonlyMap<string, BrickProvider>,
  actor: Principal,
  report: BlueprintReport,
  input: PlanInput,
): Promise<PlanResult> {
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
    baseline: null,
    verdicts: [],
    orphans: [],
    actions: [],
    missingSecrets: [],
  }
  if (!report.ok || !envelope) return result

  const chosen = selectedBrickIds(
    envelope.assemblies,
    input.assemblies,
    report.bricks.map((b) => b.id),
  )
  const secrets = new Set<string>()
  const problems: Diagnostic[] = []
  for (const brick of dependencyOrder(report.bricks)) {
    if (!chosen.has(brick.id)) {
      result.verdicts.push(verdictOf(brick, 'SKIPPED'))
      continue
    }
    const compiled = compileBody(brick.body, params, values)
    forEachString(compiled.value, (text) => {
      for (const [, name] of text.matchAll(secretRef)) secrets.add(name!)
    })
    const verdict = await planBrick(providers, actor, report, brick, compiled, problems)
    if (!verdict) continue
    for (const call of verdict.calls) {
      const action: PlanAction = { id: `a${result.actions.length + 1}`, brickId: brick.id, ...call }
      result.actions.push(action)
      verdict.verdict.actionIds.push(action.id)
    }
    result.verdicts.push(verdict.verdict)
  }
  result.missingSecrets = [...secrets].filter((name) => !(input.secretsProvided ?? []).includes(name)).sort()
  if (problems.length > 0) {
    // A body its create route refuses fails the document: no verdicts, no actions (spec: ok false).
    return { ...result, ok: false, diagnostics: [...result.diagnostics, ...problems], verdicts: [], actions: [] }
  }
  result.installable = result.verdicts.every((v) => v.verdict !== 'BLOCKED')
  return result
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

async function planBrick(
  providers: ReadonlyMap<string, BrickProvider>,
  actor: Principal,
  report: BlueprintReport,
  brick: Brick,
  compiled: { value: unknown; unresolved: readonly string[] },
  problems: Diagnostic[],
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
  let found: LiveResource[]
  try {
    const check = await provider.check?.(actor, desired)
    if (check) return blocked(brick, check, { contentHash: hash })
    found = await provider.find(actor, desired)
  } catch (err) {
    if (isAppError(err) && (err.code === 'forbidden' || err.code === 'unauthorized'))
      return blocked(
        brick,
        { code: 'read.permission_missing', message: `Reading ${brick.kind} resources needs a permission you lack` },
        { contentHash: hash },
      )
    // What a brick names may be made by an earlier brick of the same plan (seed rows of a new collection).
    if (isAppError(err) && err.code === 'collection_not_found') found = []
    else throw err
  }
  if (found.length > 1) {
    const code = brick.kind === 'nav' ? 'live.ambiguous_by_label' : 'live.ambiguous_by_slug'
    return blocked(brick, { code, message: `${found.length} live resources match this brick` }, { contentHash: hash })
  }
  const live = found[0] ?? null
  const warnings = provider.warnings?.(desired, live) ?? []
  if (live === null)
    return {
      verdict: verdictOf(brick, 'CREATE', { warnings, contentHash: hash }),
      calls: provider.calls(desired, null),
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
  // Not the install's own (there is no ledger row yet): adopting it, and changing it, is the installer's call.
  return {
    verdict: verdictOf(brick, 'ADOPT', {
      changedPaths: changed,
      warnings,
      resourceRef: live.ref,
      contentHash: hash,
      autoApply: changed.length === 0 && brick.kind !== 'grants',
      requiresConsent: changed.length > 0 || brick.kind === 'grants',
    }),
    calls: changed.length > 0 ? provider.calls(desired, live) : [],
  }
}
