import { AppError, isAppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { InstallRow, ResourceRow } from '../ledger/store.js'
import type { LiveResource, ProposedCall } from '../providers/provider.js'
import type { InstallContext } from './context.js'
import { presentInstall, presentResource, type Install, type InstallResource } from './present.js'
import type { UninstallRequest } from './schemas.js'

/** The run an uninstall is about: the blueprint's live one (not superseded, uninstalled or still open). */
async function liveInstall(ctx: InstallContext, principal: Principal, id: string): Promise<InstallRow> {
  const install = await ctx.store.install(principal.projectId, id)
  if (!install) throw new AppError('not_found', 'No such install in this project')
  if (install.status === 'superseded')
    throw new AppError('conflict', `Install ${id} was superseded: uninstall ${install.superseded_by}`, {
      supersededBy: install.superseded_by,
    })
  if (install.status === 'uninstalled') throw new AppError('conflict', 'This install is already uninstalled')
  if (install.status === 'in_progress')
    throw new AppError('conflict', 'The install is still open: settle it (final) first', { status: install.status })
  return install
}

/**
 * Every resource the blueprint holds (this run's and those an earlier run left as orphans), in the order an
 * uninstall removes them: orphans first, then this run's backwards, so dependents go before what they need.
 */
async function removalOrder(ctx: InstallContext, install: InstallRow): Promise<ResourceRow[]> {
  const held = await ctx.store.held(install.project_id, install.blueprint_id, install.namespace)
  const own = held.filter((r) => r.install_id === install.id).reverse()
  const orphans = held.filter((r) => r.install_id !== install.id).reverse()
  return [...orphans, ...own]
}

/** The live resource a row stands for, read as the caller; null when it is gone (or was never made). */
async function liveOf(ctx: InstallContext, actor: Principal, row: ResourceRow): Promise<LiveResource | null> {
  const provider = ctx.providers().get(row.brick_kind)
  if (!provider || row.resource_ref === null) return null
  const known = row.canonical_json === null ? undefined : (JSON.parse(row.canonical_json) as Record<string, unknown>)
  try {
    return await provider.read(actor, row.resource_ref, known)
  } catch (err) {
    if (isAppError(err) && err.code === 'collection_not_found') return null
    throw err
  }
}

export interface UninstallPreview {
  install: Install
  resources: (InstallResource & { present: boolean })[]
  actions: (ProposedCall & { id: string; resourceId: string })[]
}

/** What an uninstall would remove, and the calls a client would make to remove it; writes nothing. */
export async function previewUninstall(
  ctx: InstallContext,
  principal: Principal,
  id: string,
): Promise<UninstallPreview> {
  const install = await liveInstall(ctx, principal, id)
  const rows = await removalOrder(ctx, install)
  const resources: UninstallPreview['resources'] = []
  const actions: UninstallPreview['actions'] = []
  for (const row of rows) {
    const live = await liveOf(ctx, principal, row)
    resources.push({ ...presentResource(row), present: live !== null })
    if (live)
      for (const call of ctx.providers().get(row.brick_kind)!.removeCalls(live))
        actions.push({ id: `u${actions.length + 1}`, resourceId: row.id, ...call })
  }
  return { install: presentInstall(install, await ctx.store.resources(principal.projectId, id)), resources, actions }
}

/**
 * Uninstalls (spec: records status changes; not bound to the installer). Rows the caller says it removed
 * become rolled_back, the rest detached (the ledger lets go; the resources stay). With `apply` the server
 * removes each resource itself, as the caller: removed or already gone is rolled_back, refused is detached
 * with the reason.
 */
export async function uninstall(
  ctx: InstallContext,
  principal: Principal,
  id: string,
  input: UninstallRequest,
  apply: boolean,
): Promise<Install> {
  const install = await liveInstall(ctx, principal, id)
  const rows = await removalOrder(ctx, install)
  const removed = new Set(input.removed ?? [])
  const unknown = [...removed].find((r) => !rows.some((row) => row.id === r))
  if (unknown !== undefined)
    throw new AppError('invalid_request', `No resource ${unknown} held by this install`, { resourceId: unknown })
  for (const row of rows) {
    let changes: Partial<ResourceRow> = { status: removed.has(row.id) ? 'rolled_back' : 'detached' }
    if (apply) changes = await removeOne(ctx, principal, row)
    await ctx.store.updateResource(principal.projectId, row.id, { ...changes, updated_at: ctx.clock.now() })
  }
  await ctx.store.setInstallStatus(principal.projectId, id, ['partial', 'complete'], 'uninstalled', ctx.clock.now())
  return presentInstall(
    (await ctx.store.install(principal.projectId, id))!,
    await ctx.store.resources(principal.projectId, id),
  )
}

async function removeOne(ctx: InstallContext, actor: Principal, row: ResourceRow): Promise<Partial<ResourceRow>> {
  const provider = ctx.providers().get(row.brick_kind)
  if (!provider || row.resource_ref === null) return { status: 'rolled_back' }
  const known = row.canonical_json === null ? undefined : (JSON.parse(row.canonical_json) as Record<string, unknown>)
  try {
    await provider.remove(actor, row.resource_ref, known)
    return { status: 'rolled_back', error: null }
  } catch (err) {
    if (isAppError(err) && ['not_found', 'collection_not_found', 'record_not_found'].includes(err.code))
      return { status: 'rolled_back', error: null }
    if (!isAppError(err)) ctx.log.warn({ err, resourceId: row.id }, 'blueprint uninstall: a removal failed')
    return {
      status: 'detached',
      error: isAppError(err) ? `${err.code}: ${err.message}` : 'internal: the removal failed',
    }
  }
}
