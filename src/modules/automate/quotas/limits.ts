import { z } from '../../../lib/http/index.js'

/** A project's automation quotas (automation spec "Quotas (defaults)"); only the changed ones are stored. */
export const defaultLimits = {
  maxFlows: 50,
  maxConcurrentRuns: 5,
  maxExecutionMs: 30_000,
  maxRunsPerHour: 500,
  maxAiTokensPerDay: 50_000,
  maxEmailsPerDay: 200,
  maxScriptCpuMs: 5_000,
  // Beyond the spec (decision 054): runs waiting for a concurrency place; past it new runs are refused 429.
  maxPendingRuns: 10_000,
} as const

export type QuotaName = keyof typeof defaultLimits
export type Limits = { readonly [K in QuotaName]: number }

/** What the project uses now, against each limit. */
export interface Usage {
  readonly flows: number
  readonly concurrentRuns: number
  readonly runsThisHour: number
  readonly aiTokensToday: number
  readonly emailsToday: number
  /** Runs accepted and waiting for a concurrency place (maxPendingRuns). */
  readonly pendingRuns: number
}
export const zeroUsage: Usage = {
  flows: 0,
  concurrentRuns: 0,
  runsThisHour: 0,
  aiTokensToday: 0,
  emailsToday: 0,
  pendingRuns: 0,
}

const limit = (max: number) =>
  z.number().int('must be a whole number').min(1, 'must be at least 1').max(max, `must be at most ${max}`)

export const LimitsPatchSchema = z
  .strictObject({
    maxFlows: limit(100_000).optional(),
    maxConcurrentRuns: limit(1_000).optional(),
    maxExecutionMs: limit(3_600_000).optional(),
    maxRunsPerHour: limit(10_000_000).optional(),
    maxAiTokensPerDay: limit(1_000_000_000).optional(),
    maxEmailsPerDay: limit(10_000_000).optional(),
    maxScriptCpuMs: limit(600_000).optional(),
    maxPendingRuns: limit(1_000_000).optional(),
  })
  .openapi('AutomateQuotasPatch')
export type LimitsPatch = z.output<typeof LimitsPatchSchema>

const int = z.number().int()
export const QuotasSchema = z
  .object({
    limits: z.object({
      maxFlows: int,
      maxConcurrentRuns: int,
      maxExecutionMs: int,
      maxRunsPerHour: int,
      maxAiTokensPerDay: int,
      maxEmailsPerDay: int,
      maxScriptCpuMs: int,
      maxPendingRuns: int,
    }),
    usage: z.object({
      flows: int,
      concurrentRuns: int,
      runsThisHour: int,
      aiTokensToday: int,
      emailsToday: int,
      pendingRuns: int,
    }),
  })
  .openapi('AutomateQuotas')
