import { z } from 'zod'
import { notifyAdmins, systemServicesOf, throughService } from '../notify-step.js'
import { defineOperation } from '../types.js'

/**
 * system_monthly_summary (decision 038): for the calendar month (UTC) before the one it runs in, the flow
 * runs (by status) and the records created in each collection that are still there (not deleted since), sent as one notification
 * to every admin of the project. Its system flow runs on the 1st of each month.
 */
export const systemMonthlySummary = defineOperation({
  type: 'system_monthly_summary',
  category: 'system',
  label: 'Monthly summary',
  description:
    "Sends the project's admins a summary of last month (UTC): flow runs by status and records created. System-managed flows only.",
  effects: 'writes',
  system: true,
  configSchema: z.strictObject({}),
  async run(_config, ctx) {
    const services = systemServicesOf(ctx)
    const now = new Date(ctx.clock.now())
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)
    const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)
    const month = new Date(from).toISOString().slice(0, 7)
    const runs = await throughService(() => services.runStats.between(ctx.principal, from, to))
    const filter = JSON.stringify({ created_at: { _gte: Math.floor(from / 1000), _lt: Math.floor(to / 1000) } })
    const records: Record<string, number> = {}
    let created = 0
    for (const { name } of await throughService(() => services.collections.visibleTo(ctx.principal))) {
      const result = await throughService(() =>
        services.records.aggregate(ctx.principal, name, { filter, aggregate: [{ fn: 'count' }], limit: 1 }),
      )
      const count = Number(result.data[0]?.count ?? 0)
      if (count > 0) records[name] = count
      created += count
    }
    const failed = runs.byStatus.failed ?? 0
    const { sent } = await notifyAdmins(ctx, {
      title: `Summary of ${month}`,
      message: `${plural(runs.total, 'flow run')} (${failed} failed); ${plural(created, 'record')} created and still there${
        Object.keys(records).length > 0
          ? ` (${Object.entries(records)
              .map(([n, c]) => `${n}: ${c}`)
              .join(', ')})`
          : ''
      }.`,
      type: 'info',
    })
    return { month, runs, records: { created, byCollection: records }, notified: sent }
  },
})

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`
