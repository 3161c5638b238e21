import type { Kysely } from 'kysely'
import { createProjectCache } from '../../../lib/cache/project-cache.js'
import type { Clock } from '../../../lib/clock.js'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { AccessService } from '../../access/index.js'
import type { AuditService } from '../../audit/index.js'
import {
  defaultLimits,
  LimitsPatchSchema,
  zeroUsage,
  type Limits,
  type LimitsPatch,
  type QuotaName,
  type Usage,
} from './limits.js'
import { createQuotasStore } from './store.js'

export interface QuotasDeps {
  systemDb: Kysely<any>
  clock: Clock
  pubsub: PubSub
  access: Pick<AccessService, 'authorize'>
  audit: Pick<AuditService, 'record'>
}

/** A part of a project's usage, told by the part of automation that knows it (flows: the count; runs: concurrency and the hour's runs). */
export type UsageProvider = (projectId: string) => Promise<Partial<Usage>>

/** The typed refusal when a quota is reached: 403 quota_exceeded saying which quota, its limit and the usage. */
export function quotaExceeded(quota: QuotaName, limit: number, usage: number): AppError {
  return new AppError(
    'quota_exceeded',
    `The project's automation quota ${quota} (${limit}) is reached (usage ${usage})`,
    { quota, limit, usage },
  )
}

/**
 * Each project's automation quotas (automation spec "Quotas"): the limits (defaults unless changed,
 * cached and dropped on every instance when changed) and the usage the other parts report.
 */
export async function createQuotasService(deps: QuotasDeps) {
  const store = createQuotasStore(deps.systemDb)
  const cache = await createProjectCache<Limits>({
    pubsub: deps.pubsub,
    channel: 'automate.quotas',
    load: async (projectId) => ({ ...defaultLimits, ...storedOf(await store.get(projectId)) }),
  })
  const providers: UsageProvider[] = []

  async function usageOf(projectId: string): Promise<Usage> {
    const parts = await Promise.all(providers.map((p) => p(projectId)))
    return Object.assign({ ...zeroUsage }, ...parts) as Usage
  }

  return {
    /** The project's limits, for the parts that enforce them (no permission check: in-process callers only). */
    limits: (projectId: string): Promise<Limits> => cache.get(projectId),

    /** Registers a usage provider (flows at construction; the run engine later); returns its removal. */
    addUsage(provider: UsageProvider): () => void {
      providers.push(provider)
      return () => void providers.splice(providers.indexOf(provider), 1)
    },

    /** Limits and current usage of the caller's project. Throws unauthorized, forbidden (system/automate:read). */
    async get(actor: Principal): Promise<{ limits: Limits; usage: Usage }> {
      await deps.access.authorize(actor, 'system/automate:read')
      return { limits: await cache.get(actor.projectId), usage: await usageOf(actor.projectId) }
    },

    /** Changes the limits sent (positive integers). Throws forbidden (system/automate:manage), validation_error. */
    async update(actor: Principal, input: unknown): Promise<{ limits: Limits; usage: Usage }> {
      await deps.access.authorize(actor, 'system/automate:manage')
      const parsed = LimitsPatchSchema.safeParse(input)
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }))
        throw new AppError('validation_error', `${issues[0]?.path || 'body'}: ${issues[0]?.message ?? 'invalid'}`, {
          issues,
        })
      }
      const patch: LimitsPatch = parsed.data
      const projectId = actor.projectId
      const stored = { ...storedOf(await store.get(projectId)), ...patch }
      // Only what differs from the defaults is kept, so a changed default applies to every project that never set it.
      const changed = Object.fromEntries(
        Object.entries(stored).filter(([k, v]) => v !== undefined && defaultLimits[k as QuotaName] !== v),
      )
      await store.put({ project_id: projectId, limits: JSON.stringify(changed), updated_at: deps.clock.seconds() })
      await cache.invalidate(projectId)
      await deps.audit.record({
        projectId,
        action: 'automate.quotas_updated',
        actor,
        target: { type: 'automate_quotas', id: projectId },
        details: { ...patch },
      })
      return { limits: await cache.get(projectId), usage: await usageOf(projectId) }
    },

    async close(): Promise<void> {
      await cache.close()
    },
  }
}

export type QuotasService = Awaited<ReturnType<typeof createQuotasService>>

function storedOf(row: { limits: string } | undefined): Partial<Limits> {
  if (!row) return {}
  const parsed = LimitsPatchSchema.safeParse(JSON.parse(row.limits))
  return parsed.success
    ? (Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as Partial<Limits>)
    : {}
}
