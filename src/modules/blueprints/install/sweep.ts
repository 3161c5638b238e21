import { unspokenAfterMs, type InstallContext } from './context.js'

/**
 * The hourly maintenance sweep (spec: Blueprint install run): a run in progress that no one has spoken
 * for in an hour (an opener that never settled, a server that died mid-apply) becomes partial, and its
 * pending rows failed with outcome unknown. What such a write did is found again by the next plan (its
 * natural key): re-installing adopts it, writing nothing twice. Returns the runs swept.
 */
export async function sweepInstalls(ctx: InstallContext): Promise<number> {
  const now = ctx.clock.now()
  let swept = 0
  for (const install of await ctx.store.stale(now - unspokenAfterMs)) {
    for (const row of await ctx.store.resources(install.project_id, install.id))
      if (row.status === 'pending')
        await ctx.store.updateResource(install.project_id, row.id, {
          status: 'failed',
          error: 'outcome unknown: not settled within an hour',
          updated_at: now,
        })
    if (await ctx.store.setInstallStatus(install.project_id, install.id, ['in_progress'], 'partial', now)) swept++
  }
  return swept
}
