import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { readBlueprint } from '../document/read.js'
import type { ResourceRow } from '../ledger/store.js'
import type { BrickProvider } from '../providers/provider.js'
import { readBack } from './apply.js'
import { compileBrick, type InstallContext } from './context.js'
import { finishInstall } from './open.js'
import { presentInstall, type Install } from './present.js'
import type { SettleRequest } from './schemas.js'

/**
 * The opener's report of what its calls did (spec: settle). For each outcome reported ok the brick is
 * compiled again from the stored document, its resource found (by the ledger's ref, else its natural key)
 * and read back as the caller, and the hash computed here: absent on read-back is failed. Rows not pending
 * keep what they have; `final` fails what is still pending and ends the run.
 */
export async function settleInstall(
  ctx: InstallContext,
  principal: Principal,
  id: string,
  input: SettleRequest,
): Promise<Install> {
  const install = await ctx.store.install(principal.projectId, id)
  if (!install) throw new AppError('not_found', 'No such install in this project')
  if (install.created_by !== principal.userId)
    throw new AppError('forbidden', 'Only the person who opened an install may settle it')
  if (install.status !== 'in_progress')
    throw new AppError('conflict', `The install is ${install.status}: it is settled no more`, {
      status: install.status,
    })
  const rows = new Map((await ctx.store.resources(principal.projectId, id)).map((r) => [r.id, r]))
  const unknown = input.outcomes.find((o) => !rows.has(o.resourceId))
  if (unknown)
    throw new AppError('invalid_request', `No resource ${unknown.resourceId} in this install`, {
      resourceId: unknown.resourceId,
    })
  const report = readBlueprint(install.source_md)
  const values = JSON.parse(install.params_json) as Record<string, unknown>
  const providers = ctx.providers()
  for (const outcome of input.outcomes) {
    const row = rows.get(outcome.resourceId)!
    if (row.status !== 'pending') continue
    let changes: Partial<ResourceRow>
    if (outcome.skipped) changes = { status: 'skipped', error: null }
    else if (!outcome.ok)
      changes = { status: 'failed', error: (outcome.error ?? 'reported failed by the installer').slice(0, 2000) }
    else {
      const brick = report.bricks.find((b) => b.id === row.brick_id)
      const provider = providers.get(row.brick_kind)
      changes =
        brick && provider
          ? await verify(provider, principal, row, compileBrick(provider, report, brick, values))
          : { status: 'failed', error: 'the brick is no longer in the document' }
    }
    await ctx.store.updateResource(principal.projectId, row.id, { ...changes, updated_at: ctx.clock.now() })
  }
  if (input.final) {
    for (const row of rows.values())
      if (row.status === 'pending' && !input.outcomes.some((o) => o.resourceId === row.id))
        await ctx.store.updateResource(principal.projectId, row.id, {
          status: 'failed',
          error: 'not reported before the final settle',
          updated_at: ctx.clock.now(),
        })
    return finishInstall(ctx, principal.projectId, id)
  }
  await ctx.store.touch(principal.projectId, id, ctx.clock.now())
  return presentInstall(
    (await ctx.store.install(principal.projectId, id))!,
    await ctx.store.resources(principal.projectId, id),
  )
}

/** A row reported ok, checked: its resource found and read back as the caller. */
async function verify(
  provider: BrickProvider,
  actor: Principal,
  row: ResourceRow,
  desired: Record<string, unknown>,
): Promise<Partial<ResourceRow>> {
  let ref = row.resource_ref
  if (ref === null) {
    try {
      const found = await provider.find(actor, desired)
      if (found.length > 1) return { status: 'failed', error: `${found.length} live resources match the brick` }
      ref = found[0]?.ref ?? null
    } catch (err) {
      if (isAppError(err) && (err.code === 'forbidden' || err.code === 'unauthorized'))
        return { status: 'failed', error: 'read.permission_missing: you cannot read it back' }
      if (!(isAppError(err) && err.code === 'collection_not_found')) throw err
    }
  }
  if (ref === null) return { status: 'failed', error: 'absent on read-back' }
  return readBack(provider, actor, ref, desired)
}
