import { createHash } from 'node:crypto'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Principal } from '../../../lib/principal.js'
import { selectAssemblies } from '../document/assemblies.js'
import { readBlueprint } from '../document/read.js'
import { documentSource } from '../document-source.js'
import { loadLedger, namespaceOf } from '../ledger/load.js'
import type { InstallRow, ResourceRow } from '../ledger/store.js'
import { resourceKindOf } from '../ledger/view.js'
import { contentHash } from '../providers/canonical.js'
import { planBricks, type PlannedBrick } from '../plan/planner.js'
import type { InstallRequest } from './schemas.js'
import { comparedShape, type InstallContext } from './context.js'
import { applyPlanned, secretsNeeded } from './apply.js'
import { presentInstall, type Install } from './present.js'

/**
 * Opens an install run (decision 070): the document planned against the ledger as the caller, refused when
 * it fails (400 with diagnostics) or a brick is BLOCKED (409 with the verdicts), then the run and one
 * resource row per brick written in one transaction, the blueprint's earlier run superseded. With `apply`
 * the server makes every call itself, as the caller, and settles each row from its read-back.
 */
export async function openInstall(
  ctx: InstallContext,
  principal: Principal,
  input: InstallRequest,
  apply: boolean,
): Promise<Install> {
  const source = await documentSource(input)
  const report = readBlueprint(source)
  const envelope = report.envelope
  if (!report.ok || !envelope?.id)
    throw new AppError('invalid_request', 'The document has errors: validate it for the diagnostics', {
      diagnostics: report.diagnostics,
    })
  const blueprintId = envelope.id
  const params = envelope.params ?? []
  if (!apply && input.secrets !== undefined)
    throw new AppError(
      'invalid_request',
      'secrets are sent only with ?apply=true (a two-phase client makes its own calls)',
      {
        field: 'secrets',
      },
    )
  const providers = ctx.providers()
  const namespace = namespaceOf(params, input.params ?? {})
  const ledger = await loadLedger(ctx.store, principal.projectId, blueprintId, namespace)
  const { result, planned } = await planBricks(providers, principal, report, input, ledger)
  if (!result.ok)
    throw new AppError('invalid_request', 'A brick would be refused by its route: plan it for the diagnostics', {
      diagnostics: result.diagnostics.filter((d) => d.severity === 'error'),
    })
  if (!result.installable)
    throw new AppError('conflict', 'A brick is BLOCKED: plan the document to see why', {
      verdicts: result.verdicts.filter((v) => v.verdict === 'BLOCKED'),
    })
  const consent = new Set<string>((input.consent ?? []).filter((id: string) => planned.some((p) => p.brick.id === id)))
  const secrets = input.secrets ?? {}
  if (apply) {
    const declared = new Set(params.filter((p) => p.type === 'secret').map((p) => p.name))
    const unknown = Object.keys(secrets).find((name) => !declared.has(name))
    if (unknown !== undefined)
      throw new AppError('invalid_request', `${unknown} is not a secret parameter of this blueprint`, {
        param: unknown,
      })
    const missing = secretsNeeded(planned, consent).filter((name) => typeof secrets[name] !== 'string')
    if (missing.length > 0)
      throw new AppError('invalid_request', `No value for the secret parameters ${missing.join(', ')}`, {
        missingSecrets: missing,
      })
  }

  const now = ctx.clock.now()
  const declaredValues = Object.fromEntries(
    params
      .filter((p) => p.type !== 'secret' && Object.hasOwn(input.params ?? {}, p.name))
      .map((p) => [p.name, input.params![p.name]]),
  )
  const install: InstallRow = {
    id: newId(),
    project_id: principal.projectId,
    blueprint_id: blueprintId,
    namespace,
    name: envelope.name ?? blueprintId,
    version: envelope.version ?? '0.0.0',
    doc_hash: createHash('sha256').update(source).digest('hex'),
    source_md: source,
    params_json: JSON.stringify(declaredValues),
    secrets_json: JSON.stringify(params.filter((p) => p.type === 'secret').map((p) => p.name)),
    assemblies_json: JSON.stringify(selectAssemblies(envelope.assemblies, input.assemblies).map((a) => a.key)),
    consent_json: JSON.stringify([...consent]),
    status: 'in_progress',
    mode: apply ? 'server' : 'client',
    created_by: principal.userId!,
    supersedes: ledger.baseline?.installId ?? null,
    superseded_by: null,
    created_at: now,
    updated_at: now,
  }
  // A brick's row an uninstall let go is taken up again (its key may name the same resource: a collection's name).
  const released = await ctx.store.released(principal.projectId, blueprintId, namespace)
  const rows = planned
    .filter((p) => p.verdict.verdict !== 'CLAIMED')
    .map((p, i) => rowOf(ctx, install, p, i, released.get(p.brick.id)))
  await ctx.store.open(
    install,
    rows.filter((r) => !r.takenOver).map((r) => r.row),
    rows.filter((r) => r.takenOver).map((r) => ({ id: r.row.id, changes: r.row })),
  )
  const byBrick = new Map(rows.map((r) => [r.row.brick_id, r.row]))
  if (!apply)
    return presentInstall(
      install,
      rows.map((r) => r.row),
      result.actions,
    )
  await applyPlanned(ctx, principal, install, planned, byBrick, consent, secrets)
  return finishInstall(ctx, principal.projectId, install.id)
}

/** The row a planned brick gets: a held one taken over, or a new one; settled at once when nothing is written. */
function rowOf(
  ctx: InstallContext,
  install: InstallRow,
  planned: PlannedBrick,
  position: number,
  releasedId: string | undefined,
) {
  const { brick, verdict, held, live, calls } = planned
  const provider = ctx.providers().get(brick.kind)!
  const untouched = calls.length === 0 && live !== null
  const shape = untouched ? comparedShape(provider, live.shape) : null
  const row: ResourceRow = {
    id: held?.id ?? releasedId ?? newId(),
    project_id: install.project_id,
    install_id: install.id,
    blueprint_id: install.blueprint_id,
    namespace: install.namespace,
    brick_id: brick.id,
    brick_kind: brick.kind,
    resource_kind: resourceKindOf(brick.kind),
    resource_ref: live?.ref ?? held?.ref ?? null,
    verdict: verdict.verdict,
    position,
    content_hash: shape ? contentHash(shape) : (held?.hash ?? null),
    canonical_json: shape ? JSON.stringify(shape) : held?.canonical ? JSON.stringify(held.canonical) : null,
    status: untouched ? 'settled' : 'pending',
    error: null,
    created_at: install.created_at,
    updated_at: install.created_at,
  }
  return { row, takenOver: held !== null || releasedId !== undefined }
}

/** Ends a run: complete when every row is settled or skipped, partial otherwise. */
export async function finishInstall(ctx: InstallContext, projectId: string, id: string): Promise<Install> {
  const rows = await ctx.store.resources(projectId, id)
  const done = rows.every((r) => r.status === 'settled' || r.status === 'skipped')
  await ctx.store.setInstallStatus(projectId, id, ['in_progress'], done ? 'complete' : 'partial', ctx.clock.now())
  const install = await ctx.store.install(projectId, id)
  return presentInstall(install!, rows)
}
