import type { Principal } from '../../lib/principal.js'
import type { OperationContext } from './types.js'
import { throughService } from './service-call.js'

/**
 * What send_notification and the system operations need of `ctx.services` (app.ts and the automate module
 * wire them): the notifications service, and for the system flows the settings, collections, records,
 * quotas and run counts, each checking the run's principal itself (principals.system in a system flow).
 */
export interface NotificationServices {
  readonly notifications: {
    send(
      sender: Principal,
      input: {
        userId: string
        title: string
        message: string
        type?: 'info' | 'success' | 'warning' | 'error'
        link?: string | null
        flowId?: string | null
        runId?: string | null
        dedupeKey?: string | null
      },
    ): Promise<{ id: string } | null>
    adminIds(sender: Principal): Promise<string[]>
  }
}

/** A usage figure of GET /automate/quotas and the limit system_limit_check holds it against. */
export type WatchedQuota =
  | ['flows', 'maxFlows']
  | ['concurrentRuns', 'maxConcurrentRuns']
  | ['runsThisHour', 'maxRunsPerHour']
  | ['aiTokensToday', 'maxAiTokensPerDay']
  | ['emailsToday', 'maxEmailsPerDay']

export interface SystemServices extends NotificationServices {
  readonly settings: { get(projectId: string, key: 'automate.archival_days'): Promise<number> }
  readonly collections: { visibleTo(principal: Principal): Promise<readonly { name: string }[]> }
  readonly records: {
    list(
      principal: Principal,
      name: string,
      query: { page: number; limit: number; filter?: string; fields?: string; includeDeleted?: boolean },
    ): Promise<{ data: readonly unknown[] }>
    aggregate(
      principal: Principal,
      name: string,
      query: { filter?: string; aggregate?: readonly { fn: 'count' }[]; limit: number },
    ): Promise<{ data: readonly Record<string, unknown>[] }>
  }
  readonly dataTools: {
    readonly bulk: {
      delete(principal: Principal, name: string, ids: readonly string[], permanent: boolean): Promise<number>
    }
  }
  readonly quotas: {
    get(actor: Principal): Promise<{
      limits: { readonly [K in WatchedQuota[1]]: number }
      usage: { readonly [K in WatchedQuota[0]]: number }
    }>
  }
  readonly runStats: {
    between(
      principal: Principal,
      fromMs: number,
      toMs: number,
    ): Promise<{ total: number; byStatus: Record<string, number> }>
  }
}

export const notificationServicesOf = (ctx: OperationContext): NotificationServices => ctx.services
export const systemServicesOf = (ctx: OperationContext): SystemServices => ctx.services

export { throughService } from './service-call.js'

/** Sends one notification to each of the project's admins; how many were sent (a dedupe key may hold some back). */
export async function notifyAdmins(
  ctx: OperationContext,
  input: {
    title: string
    message: string
    type: 'info' | 'success' | 'warning' | 'error'
    link?: string
    dedupeKey?: string
  },
): Promise<{ admins: number; sent: number }> {
  const { notifications } = notificationServicesOf(ctx)
  const admins = await throughService(() => notifications.adminIds(ctx.principal))
  let sent = 0
  for (const userId of admins) {
    const made = await throughService(() =>
      notifications.send(ctx.principal, { ...input, userId, flowId: ctx.run.flowId, runId: ctx.run.id }),
    )
    if (made) sent++
  }
  return { admins: admins.length, sent }
}
