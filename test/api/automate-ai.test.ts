import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAi, startFakeWorkersAi, tinyPng, type FakeProvider } from '../../src/lib/ai/fake-servers.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * The AI operations inside real flow runs (issue 17 item 3), against fake providers on 127.0.0.1 that
 * speak each wire protocol: Workers AI (`cloudflare`) and an OpenAI-compatible server (`openai`). Every
 * operation runs on both; ai_generate's JSON Schema check fails a non-conforming answer; the daily token
 * quota runs out mid-day (the run that crosses it completes, the next is refused before the provider is
 * called); nothing configured is ai_not_configured; a provider 5xx is retried, a 4xx is not; keys never
 * appear in a reply or a log line. ALLOW_PRIVATE_NETWORK is off: the providers' base URLs are the
 * operator's and are reached anyway, while a flow's own http_request to the same address is refused.
 */
const BASE = '/api/v1/automate'
const CF_TOKEN = 'cf-token-7d1e0a5b9c'
const OPENAI_KEY = 'sk-test-4f2b8c61e0'

let cfFake: FakeProvider
let openaiFake: FakeProvider
/** Both providers configured: a step without provider uses cloudflare. */
let both: TestServer
/** Only the OpenAI-compatible one: every step uses it. */
let openaiOnly: TestServer
/** Nothing configured. */
let none: TestServer
const owners = new Map<TestServer, Account>()
const replies: Reply[] = []

const call = async (server: TestServer, method: string, path: string, body?: unknown): Promise<Reply> => {
  const reply = await server.request(method, path, { token: owners.get(server)!.token, body })
  replies.push(reply)
  return reply
}
const callOn =
  (server: TestServer): Call =>
  (method, path, body) =>
    call(server, method, path, body)
const flowOf = (server: TestServer, operations: unknown[]) => activeFlow(callOn(server), 'AI test', operations)
const runOf = (server: TestServer, flowId: string, body: unknown = {}) =>
  executeToEnd(callOn(server), callOn(server), flowId, body)
const runSteps = async (server: TestServer, operations: unknown[], body: unknown = {}) =>
  runOf(server, await flowOf(server, operations), body)
const usageOf = async (server: TestServer) =>
  (await call(server, 'GET', `${BASE}/quotas`)).body.data.usage.aiTokensToday as number

beforeAll(async () => {
  cfFake = await startFakeWorkersAi(CF_TOKEN)
  openaiFake = await startFakeOpenAi(OPENAI_KEY)
  const cloudflareEnv = { CF_ACCOUNT_ID: 'acct-1', CF_API_TOKEN: CF_TOKEN, CF_AI_BASE_URL: cfFake.baseUrl }
  const openaiEnv = {
    OPENAI_BASE_URL: openaiFake.baseUrl,
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_MODEL: 'llama3.1:8b',
    OPENAI_IMAGE_MODEL: 'sdxl',
  }
  ;[both, openaiOnly, none] = await Promise.all([
    startServer({ ...cloudflareEnv, ...openaiEnv }),
    startServer(openaiEnv),
    startServer({}),
  ])
  for (const server of [both, openaiOnly, none]) owners.set(server, await signUpOwner(server))
})
afterAll(async () => {
  await Promise.all([both, openaiOnly, none].map((server) => server?.stop()))
  await cfFake?.close()
  await openaiFake?.close()
})

// One step of each operation, and the answer each gets from the provider, in order.
const everyOperation = [
  { key: 'gen', type: 'ai_generate', config: { userPrompt: 'Tagline for {{$trigger.body.product}}', maxTokens: 40 } },
  {
    key: 'cls',
    type: 'ai_classify',
    config: { text: '{{$trigger.body.message}}', labels: ['billing', 'bug', 'other'] },
  },
  {
    key: 'ext',
    type: 'ai_extract',
    config: {
      text: '{{$trigger.body.message}}',
      schema: { type: 'object', required: ['order'], properties: { order: { type: 'string' } } },
    },
  },
  { key: 'sum', type: 'ai_summarize', config: { text: '{{$trigger.body.message}}', style: 'brief', maxLength: 10 } },
  { key: 'tr', type: 'ai_translate', config: { text: '{{$steps.gen.text}}', targetLanguage: 'German' } },
  { key: 'rev', type: 'ai_review', config: { content: '{{$steps.gen.text}}', criteria: ['catchy'], threshold: 0.5 } },
  { key: 'img', type: 'ai_image', config: { prompt: 'A poster of {{$steps.gen.text}}', width: 512, height: 512 } },
]
const everyAnswer = [
  { text: 'Lamps that last', usage: 20 },
  { text: '{"label": "bug", "scores": {"billing": 0.1, "bug": 0.8, "other": 0.1}}', usage: 30 },
  { text: '{"order": "A-17"}', usage: 25 },
  { text: 'Order A-17 is broken.', usage: null },
  { text: '{"translation": "Lampen, die halten", "sourceLanguage": "English"}', usage: 15 },
  { text: '{"score": 0.9, "feedback": "Catchy.", "issues": [], "suggestions": ["add a verb"]}', usage: 12 },
]
const trigger = { product: 'lamps', message: 'Order A-17 arrived broken, please help' }

function expectEveryOutput(run: any, provider: string) {
  expect(run.status, JSON.stringify(run.error)).toBe('completed')
  const out = Object.fromEntries(run.stepLogs.map((log: any) => [log.key, log.output]))
  expect(out.gen).toMatchObject({ text: 'Lamps that last', provider, tokens: 20, tokensEstimated: false })
  expect(out.cls).toMatchObject({
    label: 'bug',
    confidence: 0.8,
    scores: { billing: 0.1, bug: 0.8, other: 0.1 },
    provider,
  })
  expect(out.ext).toMatchObject({ data: { order: 'A-17' }, provider })
  expect(out.sum).toMatchObject({ summary: 'Order A-1…', style: 'brief', tokensEstimated: true })
  expect(out.tr).toMatchObject({
    translation: 'Lampen, die halten',
    sourceLanguage: 'English',
    targetLanguage: 'German',
  })
  expect(out.rev).toMatchObject({
    score: 0.9,
    passed: true,
    feedback: 'Catchy.',
    issues: [],
    suggestions: ['add a verb'],
  })
  expect(out.img).toMatchObject({
    fileId: expect.any(String),
    file: { mimeType: 'image/png', sizeBytes: tinyPng.length },
    provider,
  })
  return out
}

describe('every AI operation on each provider', () => {
  it("cloudflare (Workers AI): seven steps, each answered over the REST protocol; the image is stored as a file of the run's user", async () => {
    cfFake.reset()
    cfFake.queue(...everyAnswer)
    const usageBefore = await usageOf(both)
    const run = await runSteps(both, everyOperation, trigger)
    const out = expectEveryOutput(run, 'cloudflare')
    expect(cfFake.received.map((r) => r.path)).toEqual([
      ...Array(6).fill('/client/v4/accounts/acct-1/ai/run/@cf/meta/llama-3.1-8b-instruct'),
      '/client/v4/accounts/acct-1/ai/run/@cf/stabilityai/stable-diffusion-xl-base-1.0',
    ])
    expect(cfFake.received.every((r) => r.headers.authorization === `Bearer ${CF_TOKEN}`)).toBe(true)
    expect(JSON.parse(cfFake.received[0]!.body)).toMatchObject({
      messages: [{ role: 'user', content: 'Tagline for lamps' }],
      max_tokens: 40,
    })
    expect(JSON.parse(cfFake.received[6]!.body)).toEqual({
      prompt: 'A poster of Lamps that last',
      width: 512,
      height: 512,
    })
    const file = await call(both, 'GET', `/api/v1/files/${out.img.fileId}`)
    expect(file.status, file.text).toBe(200)
    expect(file.body.data).toMatchObject({
      mimeType: 'image/png',
      uploadedBy: owners.get(both)!.id,
      sizeBytes: tinyPng.length,
    })
    // 20 + 30 + 25 + an estimate for the summary + 15 + 12 + the image's estimate.
    const used = (await usageOf(both)) - usageBefore
    expect(used).toBe(20 + 30 + 25 + out.sum.tokens + 15 + 12 + out.img.tokens)
    expect(out.img.tokens).toBeGreaterThan(1000)
  })
  it('openai (an OpenAI-compatible server): the same seven steps over /chat/completions and /images/generations', async () => {
    openaiFake.reset()
    openaiFake.queue(...everyAnswer)
    const run = await runSteps(openaiOnly, everyOperation, trigger)
    expectEveryOutput(run, 'openai')
    expect(openaiFake.received.map((r) => r.path)).toEqual([
      ...Array(6).fill('/v1/chat/completions'),
      '/v1/images/generations',
    ])
    expect(openaiFake.received.every((r) => r.headers.authorization === `Bearer ${OPENAI_KEY}`)).toBe(true)
    expect(JSON.parse(openaiFake.received[0]!.body)).toMatchObject({
      model: 'llama3.1:8b',
      max_tokens: 40,
      temperature: 0.7,
    })
    expect(JSON.parse(openaiFake.received[6]!.body)).toEqual({
      model: 'sdxl',
      prompt: 'A poster of Lamps that last',
      n: 1,
      response_format: 'b64_json',
      size: '512x512',
    })
  })
  it('provider: openai on a server with both goes to the OpenAI-compatible one', async () => {
    cfFake.reset()
    openaiFake.reset()
    openaiFake.queue({ text: 'from openai' })
    const run = await runSteps(both, [
      { key: 'gen', type: 'ai_generate', config: { userPrompt: 'hi', provider: 'openai', model: 'qwen2.5:7b' } },
    ])
    expect(run.stepLogs[0].output).toMatchObject({ text: 'from openai', provider: 'openai', model: 'qwen2.5:7b' })
    expect(cfFake.received).toHaveLength(0)
    expect(openaiFake.received).toHaveLength(1)
  })
})

describe('ai_generate with a JSON Schema', () => {
  const jsonSchema = {
    type: 'object',
    required: ['title', 'year'],
    properties: { title: { type: 'string' }, year: { type: 'integer', minimum: 1900 } },
    additionalProperties: false,
  }
  it('a conforming answer is data', async () => {
    cfFake.queue({ text: '{"title": "Metropolis", "year": 1927}' })
    const run = await runSteps(both, [
      { key: 'film', type: 'ai_generate', config: { userPrompt: 'A silent film', jsonSchema } },
    ])
    expect(run.stepLogs[0].output).toMatchObject({ data: { title: 'Metropolis', year: 1927 } })
  })
  it('a non-conforming answer fails the run with ai_invalid_output naming the problem', async () => {
    openaiFake.queue({ text: '{"title": "Metropolis", "year": 1800, "director": "Lang"}' })
    const run = await runSteps(openaiOnly, [
      { key: 'film', type: 'ai_generate', config: { userPrompt: 'A silent film', jsonSchema } },
    ])
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'ai_invalid_output', step: 'film' })
    expect(JSON.stringify(run.error)).toMatch(/does not match the JSON Schema/)
  })
  it('a schema that cannot compile (or whose pattern RE2 cannot run) is refused when the flow is saved (422)', async () => {
    const created = await call(both, 'POST', `${BASE}/flows`, {
      name: 'Bad schema',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [
        {
          key: 'g',
          type: 'ai_generate',
          config: { userPrompt: 'x', jsonSchema: { type: 'string', pattern: '(a)\\1' } },
        },
      ],
    })
    expect(created.status).toBe(422)
    expect(created.body.error).toBe('validation_error')
  })
})

describe('the daily AI token quota', () => {
  it('a run that pushes usage over the limit completes; the next is refused with ai_quota_exceeded and the provider is not called', async () => {
    const used = await usageOf(openaiOnly)
    const patched = await call(openaiOnly, 'PATCH', `${BASE}/quotas`, { maxAiTokensPerDay: used + 50 })
    expect(patched.status, patched.text).toBe(200)
    const flowId = await flowOf(openaiOnly, [{ key: 'gen', type: 'ai_generate', config: { userPrompt: 'hi' } }])
    openaiFake.reset()
    openaiFake.queue({ text: 'a long answer', usage: 60 })
    const first = await runOf(openaiOnly, flowId)
    expect(first.status).toBe('completed')
    expect(await usageOf(openaiOnly)).toBe(used + 60)
    const second = await runOf(openaiOnly, flowId)
    expect(second.status).toBe('failed')
    expect(second.error).toMatchObject({ code: 'ai_quota_exceeded', step: 'gen' })
    expect(JSON.stringify(second.error)).toContain(`${used + 60} of ${used + 50}`)
    expect(openaiFake.received).toHaveLength(1)
    // Not retried by onError retry either: the quota resets at midnight UTC.
    const retried = await runSteps(openaiOnly, [
      {
        key: 'gen',
        type: 'ai_generate',
        onError: 'retry',
        retryConfig: { maxAttempts: 3, delayMs: 0 },
        config: { userPrompt: 'hi' },
      },
    ])
    expect(retried.error).toMatchObject({ code: 'ai_quota_exceeded' })
    expect(retried.stepLogs[0].attempts).toBe(1)
    expect(openaiFake.received).toHaveLength(1)
    // A higher limit lets runs through again.
    expect((await call(openaiOnly, 'PATCH', `${BASE}/quotas`, { maxAiTokensPerDay: 1_000_000 })).status).toBe(200)
    openaiFake.queue({ text: 'again' })
    expect((await runOf(openaiOnly, flowId)).status).toBe('completed')
  })
})

describe('failures', () => {
  it('nothing configured: ai_not_configured, for text and images', async () => {
    for (const step of [
      { key: 'gen', type: 'ai_generate', config: { userPrompt: 'hi' } },
      { key: 'img', type: 'ai_image', config: { prompt: 'a fox' } },
    ]) {
      const run = await runSteps(none, [step])
      expect(run.status).toBe('failed')
      expect(run.error).toMatchObject({ code: 'ai_not_configured', step: step.key })
    }
  })
  it('a provider that is not configured: ai_not_configured naming it', async () => {
    cfFake.reset()
    const run = await runSteps(openaiOnly, [
      { key: 'gen', type: 'ai_classify', config: { text: 'x', labels: ['a', 'b'], provider: 'cloudflare' } },
    ])
    expect(run.error).toMatchObject({ code: 'ai_not_configured' })
    expect(JSON.stringify(run.error)).toContain('cloudflare')
    expect(cfFake.received).toHaveLength(0)
  })
  it('a provider 5xx is retryable (onError retry tries again); a 4xx is not', async () => {
    const retrying = { onError: 'retry', retryConfig: { maxAttempts: 2, delayMs: 0 } }
    cfFake.reset()
    cfFake.queue(
      { status: 503, body: { success: false, errors: [{ message: 'Capacity temporarily exceeded' }] } },
      { text: 'second time lucky' },
    )
    const recovered = await runSteps(both, [
      { key: 'gen', type: 'ai_generate', ...retrying, config: { userPrompt: 'hi' } },
    ])
    expect(recovered.status).toBe('completed')
    expect(recovered.stepLogs[0]).toMatchObject({ attempts: 2, output: { text: 'second time lucky' } })
    expect(cfFake.received).toHaveLength(2)

    openaiFake.reset()
    openaiFake.queue(
      { status: 500, body: { error: { message: 'boom' } } },
      { status: 500, body: { error: { message: 'boom' } } },
    )
    const down = await runSteps(openaiOnly, [
      { key: 'gen', type: 'ai_generate', ...retrying, config: { userPrompt: 'hi' } },
    ])
    expect(down.error).toMatchObject({ code: 'ai_provider_error', step: 'gen' })
    expect(openaiFake.received).toHaveLength(2)

    openaiFake.reset()
    openaiFake.queue({ status: 400, body: { error: { message: `model not found; key ${OPENAI_KEY}` } } })
    const refused = await runSteps(openaiOnly, [
      { key: 'gen', type: 'ai_generate', ...retrying, config: { userPrompt: 'hi' } },
    ])
    expect(refused.error).toMatchObject({ code: 'ai_provider_error', step: 'gen' })
    expect(JSON.stringify(refused.error)).toContain('answered 400: model not found')
    expect(refused.stepLogs[0].attempts).toBe(1)
    expect(openaiFake.received).toHaveLength(1)
  })
  it("the providers' base URL is reached on 127.0.0.1, but a flow's own http_request to that address is blocked", async () => {
    const before = cfFake.received.length
    const run = await runSteps(both, [
      {
        key: 'peek',
        type: 'http_request',
        config: { url: `${cfFake.server.origin}/client/v4/accounts/acct-1/ai/run/x` },
      },
    ])
    expect(run.error).toMatchObject({ code: 'blocked_address' })
    expect(cfFake.received.length).toBe(before)
  })
  it("a model name that would change the provider's URL (another path, a query) is refused when the flow is saved", async () => {
    for (const model of [
      '../../../../zones/x',
      '@cf/meta/../../x',
      'x?account=other',
      'x#y',
      'https://evil.example/x',
    ]) {
      const created = await call(both, 'POST', `${BASE}/flows`, {
        name: 'Model path',
        triggerType: 'manual',
        triggerConfig: {},
        operations: [{ key: 'g', type: 'ai_generate', config: { userPrompt: 'x', model } }],
      })
      expect(created.status, model).toBe(422)
      expect(created.body.error).toBe('validation_error')
    }
  })
  it('a dry run calls no provider (the AI operations have effects)', async () => {
    cfFake.reset()
    const created = await call(both, 'POST', `${BASE}/flows`, {
      name: 'Dry AI',
      triggerType: 'manual',
      triggerConfig: {},
      operations: everyOperation,
    })
    expect(created.status, created.text).toBe(201)
    const reply = await call(both, 'POST', `${BASE}/flows/${created.body.data.id}/test`, trigger)
    expect(reply.status, reply.text).toBe(200)
    expect(cfFake.received).toHaveLength(0)
  })
  it('no reply and no log line holds a provider key', () => {
    for (const key of [CF_TOKEN, OPENAI_KEY]) {
      for (const reply of replies) expect(reply.text).not.toContain(key)
      for (const server of [both, openaiOnly, none]) expect(server.logs.join('\n')).not.toContain(key)
    }
  })
})
