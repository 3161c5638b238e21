import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Kysely } from 'kysely'
import type { AiProvider, AiProviders } from '../../lib/ai/index.js'
import { AiProviderError } from '../../lib/ai/index.js'
import { tinyPng } from '../../lib/ai/fake-servers.js'
import { createManualClock, type ManualClock } from '../../lib/clock-manual.js'
import { openSqlite } from '../../lib/db/index.js'
import { AppError } from '../../lib/errors.js'
import { principals } from '../../lib/principal.js'
import { m0019AiTokenUsage } from '../../migrations/system/0019-ai-token-usage.js'
import type { UsageProvider } from '../automate/index.js'
import { StepError } from '../operations/index.js'
import { createAiService, dayOf } from './service.js'

/**
 * The AI service over a real SQLite ai_token_usage table, with a manual clock and an in-process provider:
 * tokens counted per UTC day, the quota checked before each call and reset the next day, images handed
 * to the files API as a multipart upload, provider failures as typed step errors.
 */
let db: Kysely<any>
let clock: ManualClock
let calls: number
let usageProviders: UsageProvider[]
let uploads: { principal: unknown; contentType: string | undefined; body: Buffer }[]
let uploadRefusal: AppError | null

const principal = principals.system('p1', 'test')
const signal = new AbortController().signal
const fakeProvider = (tokens: number, fail?: AiProviderError): AiProvider => ({
  name: 'openai',
  async chat() {
    calls++
    if (fail) throw fail
    return { text: 'answer', model: 'm', usage: { tokens, estimated: false } }
  },
  async image() {
    calls++
    return { bytes: tinyPng, mimeType: 'image/png', model: 'img', usage: { tokens, estimated: true } }
  },
})
const providersOf = (provider: AiProvider | null): AiProviders => ({
  get: (name) => (provider && name === provider.name ? provider : null),
  defaultName: provider ? provider.name : null,
})

function service(provider: AiProvider | null, limit = 100) {
  return createAiService({
    systemDb: db,
    clock,
    providers: providersOf(provider),
    quotas: {
      limits: async () => ({
        maxFlows: 50,
        maxConcurrentRuns: 5,
        maxExecutionMs: 30_000,
        maxRunsPerHour: 500,
        maxAiTokensPerDay: limit,
        maxEmailsPerDay: 200,
        maxScriptCpuMs: 5_000,
        maxPendingRuns: 10_000,
      }),
      addUsage: (p) => (usageProviders.push(p), () => void usageProviders.splice(usageProviders.indexOf(p), 1)),
    },
    files: {
      async upload(who, body) {
        const chunks: Buffer[] = []
        for await (const chunk of body.source) chunks.push(Buffer.from(chunk))
        uploads.push({ principal: who, contentType: body.contentType, body: Buffer.concat(chunks) })
        if (uploadRefusal) throw uploadRefusal
        return {
          id: 'f1',
          r2Key: 'p1/f1/x.png',
          filename: 'x.png',
          mimeType: 'image/png',
          sizeBytes: tinyPng.length,
          visibility: 'public',
        } as any
      },
    },
  })
}
const chat = (ai: ReturnType<typeof service>) =>
  ai.steps.chat(principal, { messages: [{ role: 'user', content: 'hi' }] }, signal)
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (err: unknown) => err as StepError,
  )

beforeEach(async () => {
  db = openSqlite(':memory:')
  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .execute()
  await db
    .insertInto('projects')
    .values([{ id: 'p1' }, { id: 'p2' }])
    .execute()
  await m0019AiTokenUsage.up(db, 'sqlite')
  clock = createManualClock(Date.UTC(2026, 2, 10, 23, 58))
  calls = 0
  usageProviders = []
  uploads = []
  uploadRefusal = null
})
afterEach(async () => {
  await db.destroy()
})

describe('the AI service', () => {
  it("counts the provider's tokens against the project's UTC day and reports them as aiTokensToday", async () => {
    const ai = service(fakeProvider(30))
    expect(await chat(ai)).toEqual({
      text: 'answer',
      model: 'm',
      provider: 'openai',
      tokens: 30,
      tokensEstimated: false,
    })
    await chat(ai)
    expect(await ai.tokensToday('p1')).toBe(60)
    expect(await ai.tokensToday('p2')).toBe(0)
    expect(usageProviders).toHaveLength(1)
    expect(await usageProviders[0]!('p1')).toEqual({ aiTokensToday: 60 })
    ai.close()
    expect(usageProviders).toHaveLength(0)
  })
  it("once the day's tokens are spent, refuses before calling the provider (not retryable); the next UTC day starts from 0", async () => {
    const ai = service(fakeProvider(70), 100)
    await chat(ai)
    await chat(ai) // 70 < 100: allowed, and it crosses the limit
    expect(await ai.tokensToday('p1')).toBe(140)
    const refused = await failure(chat(ai))
    expect(refused).toBeInstanceOf(StepError)
    expect(refused).toMatchObject({
      code: 'ai_quota_exceeded',
      statusCode: 429,
      retryable: false,
      details: { limit: 100, used: 140, remaining: 0 },
    })
    expect(await failure(ai.steps.image(principal, { prompt: 'p', name: 'n' }, signal))).toMatchObject({
      code: 'ai_quota_exceeded',
    })
    expect(calls).toBe(2)
    await clock.advance(2 * 60_000) // 00:00 UTC
    expect(dayOf(clock.now())).toBe('2026-03-11')
    expect(await ai.tokensToday('p1')).toBe(0)
    await chat(ai)
    expect(calls).toBe(3)
  })
  it('keeps 35 days of history', async () => {
    const ai = service(fakeProvider(5), 1_000)
    await chat(ai)
    await clock.advance(36 * 86_400_000)
    await chat(ai)
    const days = await db.selectFrom('ai_token_usage').select('day').orderBy('day').execute()
    expect(days.map((d) => d.day)).toEqual(['2026-04-15'])
  })
  it('nothing configured, or the named provider not configured: ai_not_configured (503, not retried), before the quota is read', async () => {
    expect(await failure(chat(service(null)))).toMatchObject({
      code: 'ai_not_configured',
      statusCode: 503,
      retryable: false,
    })
    const onlyOpenai = service(fakeProvider(1))
    expect(
      await failure(onlyOpenai.steps.chat(principal, { provider: 'cloudflare', messages: [] }, signal)),
    ).toMatchObject({ code: 'ai_not_configured', details: { provider: 'cloudflare' } })
    expect(calls).toBe(0)
  })
  it('a provider failure keeps its code, status and retryability; nothing is counted', async () => {
    const busy = service(
      fakeProvider(10, new AiProviderError('ai_provider_error', 'Workers AI answered 503', true, 503)),
    )
    expect(await failure(chat(busy))).toMatchObject({
      code: 'ai_provider_error',
      retryable: true,
      statusCode: 502,
      details: { status: 503, provider: 'openai' },
    })
    const refused = service(fakeProvider(10, new AiProviderError('ai_provider_error', 'answered 400', false, 400)))
    expect(await failure(chat(refused))).toMatchObject({ retryable: false, details: { status: 400 } })
    expect(await busy.tokensToday('p1')).toBe(0)
  })
  it("an image goes to the files API as the run's principal, as one multipart file; a files refusal is the step's error", async () => {
    const ai = service(fakeProvider(1003), 10_000)
    const out = await ai.steps.image(principal, { prompt: 'a fox', name: 'ai-image-run-1-img', width: 64 }, signal)
    expect(out).toMatchObject({
      file: { id: 'f1', mimeType: 'image/png' },
      tokens: 1003,
      tokensEstimated: true,
      provider: 'openai',
    })
    expect(uploads[0]!.principal).toBe(principal)
    expect(uploads[0]!.contentType).toMatch(/^multipart\/form-data; boundary=/)
    expect(uploads[0]!.body.toString('latin1')).toContain(
      'filename="ai-image-run-1-img.png"\r\nContent-Type: image/png',
    )
    expect(uploads[0]!.body.includes(tinyPng)).toBe(true)
    uploadRefusal = new AppError('limit_exceeded', 'The project storage quota is reached')
    expect(await failure(ai.steps.image(principal, { prompt: 'a fox', name: 'x' }, signal))).toMatchObject({
      code: 'limit_exceeded',
      statusCode: 400,
      retryable: false,
    })
  })
})
