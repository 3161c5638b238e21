import { z } from 'zod'
import { systemServicesOf, throughService } from '../notify-step.js'
import { defineOperation } from '../types.js'

/** Records purged per collection per run at most (the rest go at the next run); ids per bulk delete. */
const maxPerCollection = 10_000
const chunk = 200

/**
 * system_archival (decision 038): records soft-deleted longer ago than the project setting
 * `automate.archival_days` (30) are deleted for good through the records service (a permanent bulk delete:
 * cascades, shares and events as the API does), collection by collection. Live records and records
 * soft-deleted more recently are left. Runs in system-managed flows only.
 */
export const systemArchival = defineOperation({
  type: 'system_archival',
  category: 'system',
  label: 'Archival',
  description:
    'Purges records soft-deleted longer ago than the setting automate.archival_days (30), in every collection of the project. System-managed flows only.',
  effects: 'writes',
  system: true,
  configSchema: z.strictObject({}),
  async run(_config, ctx) {
    const services = systemServicesOf(ctx)
    const days = await services.settings.get(ctx.run.projectId, 'automate.archival_days')
    const cutoff = Math.floor(ctx.clock.now() / 1000) - days * 86_400
    const filter = JSON.stringify({ deleted_at: { _lt: cutoff } })
    const purged: Record<string, number> = {}
    let total = 0
    for (const { name } of await throughService(() => services.collections.visibleTo(ctx.principal))) {
      let count = 0
      while (count < maxPerCollection) {
        const page = await throughService(() =>
          services.records.list(ctx.principal, name, {
            page: 1,
            limit: chunk,
            filter,
            fields: 'id',
            includeDeleted: true,
          }),
        )
        const ids = page.data.map((r) => String((r as { id: unknown }).id))
        if (ids.length === 0) break
        const deleted = await throughService(() => services.dataTools.bulk.delete(ctx.principal, name, ids, true))
        count += deleted
        if (deleted === 0 || ids.length < chunk) break
      }
      if (count >= maxPerCollection)
        ctx.log({ level: 'warn', message: `${name}: ${count} purged; more remain for the next run` })
      if (count > 0) purged[name] = count
      total += count
    }
    return { days, cutoff: new Date(cutoff * 1000).toISOString(), purged: total, collections: purged }
  },
})
