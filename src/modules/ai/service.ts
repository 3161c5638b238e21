import type { Kysely } from 'kysely'
import { isAiProviderError, type AiProvider, type AiProviderName, type AiProviders } from '../../lib/ai/index.js'
import type { Clock } from '../../lib/clock.js'
import { isAppError } from '../../lib/errors.js'
import type { Principal } from '../../lib/principal.js'
import type { QuotasService } from '../automate/index.js'
import type { FilesService } from '../files/index.js'
import {
  StepError,
  stepErrorFrom,
  type AiChatInput,
  type AiChatOutput,
  type AiImageInput,
  type AiImageOutput,
  type AiSteps,
} from '../operations/index.js'
import { multipartBody } from './multipart-body.js'
import { createAiUsageStore, keptDays } from './store.js'

export interface AiDeps {
  systemDb: Kysely<any>
  clock: Clock
  /** The providers configured from CF_* and OPENAI_* (lib/ai). */
  providers: AiProviders
  /** ai_image stores its image through the files API as the run's principal. */
  files: Pick<FilesService, 'upload'>
  /** maxAiTokensPerDay, and where aiTokensToday is reported. */
  quotas: Pick<QuotasService, 'limits' | 'addUsage'>
}

/** YYYY-MM-DD of a time in UTC: the quota's day. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/**
 * The AI operations' service (docs/ai.md): chooses the provider, refuses a call once the project's daily
 * AI tokens are spent, counts what each call used (the provider's usage figure, else an estimate) against
 * the UTC day, and stores ai_image's image as a file. Registers `aiTokensToday` with the quotas.
 */
export function createAiService(deps: AiDeps) {
  const store = createAiUsageStore(deps.systemDb)
  const today = () => dayOf(deps.clock.now())
  const dropUsage = deps.quotas.addUsage(async (projectId) => ({
    aiTokensToday: await store.tokens(projectId, today()),
  }))

  /** The provider to use; ai_not_configured (503, not retried) when it is not set up on this server. */
  function providerFor(name: string | undefined): AiProvider {
    const chosen = (name ?? deps.providers.defaultName) as AiProviderName | null
    const found = chosen ? deps.providers.get(chosen) : null
    if (found) return found
    const message = name
      ? `The AI provider ${name} is not configured on this server`
      : 'No AI provider is configured on this server (CF_ACCOUNT_ID and CF_API_TOKEN, or OPENAI_BASE_URL / OPENAI_API_KEY)'
    throw new StepError('ai_not_configured', message, { provider: name ?? null }, 503, false)
  }

  /** Refuses the call when the day's tokens are spent: ai_quota_exceeded (429, not retried: it resets at 00:00 UTC). */
  async function admit(projectId: string): Promise<void> {
    const limit = (await deps.quotas.limits(projectId)).maxAiTokensPerDay
    const used = await store.tokens(projectId, today())
    if (used >= limit) {
      throw new StepError(
        'ai_quota_exceeded',
        `The project's AI tokens for today are spent (${used} of ${limit}); the quota resets at 00:00 UTC`,
        { limit, used, remaining: 0 },
        429,
        false,
      )
    }
  }

  async function count(projectId: string, tokens: number): Promise<void> {
    if (tokens <= 0) return
    const now = deps.clock.now()
    await store.add(projectId, dayOf(now), tokens, dayOf(now - keptDays * 86_400_000))
  }

  /** A provider failure as the step's error; its message never holds a credential (lib/ai redacts). */
  function failure(err: unknown, provider: string): unknown {
    if (!isAiProviderError(err)) return err
    const details: Record<string, unknown> = { provider }
    if (err.status !== null) details.status = err.status
    return new StepError(err.code, err.message, details, err.code === 'aborted' ? 499 : 502, err.retryable)
  }

  const steps: AiSteps = {
    async chat(principal: Principal, input: AiChatInput, signal: AbortSignal): Promise<AiChatOutput> {
      const provider = providerFor(input.provider)
      await admit(principal.projectId)
      let result
      try {
        result = await provider.chat({
          messages: input.messages,
          model: input.model,
          maxTokens: input.maxTokens,
          temperature: input.temperature,
          json: input.json,
          signal,
        })
      } catch (err) {
        throw failure(err, provider.name)
      }
      await count(principal.projectId, result.usage.tokens)
      return {
        text: result.text,
        model: result.model,
        provider: provider.name,
        tokens: result.usage.tokens,
        tokensEstimated: result.usage.estimated,
      }
    },

    async image(principal: Principal, input: AiImageInput, signal: AbortSignal): Promise<AiImageOutput> {
      const provider = providerFor(undefined)
      await admit(principal.projectId)
      let result
      try {
        result = await provider.image({
          prompt: input.prompt,
          model: input.model,
          width: input.width,
          height: input.height,
          signal,
        })
      } catch (err) {
        throw failure(err, provider.name)
      }
      await count(principal.projectId, result.usage.tokens)
      const extension = result.mimeType.split('/')[1] === 'jpeg' ? 'jpg' : result.mimeType.split('/')[1]
      const filename = `${input.name}.${extension}`
      let file
      try {
        file = await deps.files.upload(principal, multipartBody('file', filename, result.mimeType, result.bytes))
      } catch (err) {
        if (!isAppError(err)) throw err
        throw stepErrorFrom(err)
      }
      return {
        file: {
          id: file.id,
          r2Key: file.r2Key,
          filename: file.filename,
          mimeType: file.mimeType,
          sizeBytes: file.sizeBytes,
          visibility: file.visibility,
        },
        model: result.model,
        provider: provider.name,
        tokens: result.usage.tokens,
        tokensEstimated: result.usage.estimated,
      }
    },
  }

  return {
    /** What operations reach as ctx.services.ai. */
    steps,
    /** Tokens the project used today (UTC), for tests and the quotas. */
    tokensToday: (projectId: string) => store.tokens(projectId, today()),
    close(): void {
      dropUsage()
    },
  }
}

export type AiService = ReturnType<typeof createAiService>
