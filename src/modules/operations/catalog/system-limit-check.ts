import { z } from 'zod'
import { notifyAdmins, systemServicesOf, throughService, type WatchedQuota } from '../notify-step.js'
import { numeric } from '../schema-helpers.js'
import { defineOperation } from '../types.js'

/** Each usage figure of GET /automate/quotas and the limit it is held against. */
const pairs: readonly WatchedQuota[] = [
  ['flows', 'maxFlows'],
  ['concurrentRuns', 'maxConcurrentRuns'],
  ['runsThisHour', 'maxRunsPerHour'],
  ['aiTokensToday', 'maxAiTokensPerDay'],
  ['emailsToday', 'maxEmailsPerDay'],
]

/**
 * system_limit_check (decision 038): the project's automation usage against its quotas; each quota used to
 * `threshold` percent (80) or more becomes a warning notification to every admin of the project (error
 * at 100%). One unread warning per quota and admin: while it is unread, later checks add no other.
 */
export const systemLimitCheck = defineOperation({
  type: 'system_limit_check',
  category: 'system',
  label: 'Limit check',
  description:
    "Warns the project's admins (notifications) of every automation quota used to the threshold (80%) or more. System-managed flows only.",
  effects: 'writes',
  system: true,
  configSchema: z.strictObject({
    threshold: numeric(z.number().int().min(1).max(100))
      .default(80)
      .describe('Percent of a quota from which admins are warned'),
  }),
  async run({ threshold }, ctx) {
    const { quotas } = systemServicesOf(ctx)
    const { limits, usage } = await throughService(() => quotas.get(ctx.principal))
    const warnings = pairs.flatMap(([used, limit]) => {
      const max = limits[limit] ?? 0
      const value = usage[used] ?? 0
      const percent = max > 0 ? Math.floor((value / max) * 100) : 0
      return max > 0 && percent >= threshold ? [{ quota: limit, usage: value, limit: max, percent }] : []
    })
    let notified = 0
    for (const w of warnings) {
      const { sent } = await notifyAdmins(ctx, {
        title: `Automation quota ${w.quota} at ${w.percent}%`,
        message: `The project uses ${w.usage} of its ${w.limit} (${w.quota}). Raise the quota (PATCH /api/v1/automate/quotas) or use less.`,
        type: w.percent >= 100 ? 'error' : 'warning',
        link: '/api/v1/automate/quotas',
        dedupeKey: `system_limit_check:${w.quota}`,
      })
      notified += sent
    }
    return { threshold, warnings, notified }
  },
})
