import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createOutboundClient } from '../outbound/index.js'
import { AiProviderError } from './errors.js'
import { startFakeOpenAi, startFakeWorkersAi, tinyPng, type FakeProvider } from './fake-servers.js'
import { createAiProviders, type AiProvider } from './index.js'

const CF_TOKEN = 'cf-token-5ecret-value'
const OPENAI_KEY = 'sk-openai-5ecret-value'
let cfFake: FakeProvider
let openaiFake: FakeProvider
let cloudflare: AiProvider
let openai: AiProvider

beforeAll(async () => {
  cfFake = await startFakeWorkersAi(CF_TOKEN)
  openaiFake = await startFakeOpenAi(OPENAI_KEY)
  // The app's own client: ALLOW_PRIVATE_NETWORK plays no part, the base URLs are the operator's.
  const providers = createAiProviders({
    cloudflare: { accountId: 'acc-1', apiToken: CF_TOKEN, baseUrl: cfFake.baseUrl },
    openai: { baseUrl: openaiFake.baseUrl, apiKey: OPENAI_KEY, textModel: 'llama3.1:8b', imageModel: 'dall-e-3' },
  })
  cloudflare = providers.get('cloudflare')!
  openai = providers.get('openai')!
})
afterAll(async () => {
  await cfFake.close()
  await openaiFake.close()
})
beforeEach(() => {
  cfFake.reset()
  openaiFake.reset()
})

const failure = async (call: Promise<unknown>): Promise<AiProviderError> => {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(AiProviderError)
  return err as AiProviderError
}
const messages = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hello there' },
]

describe('choosing a provider', () => {
  it('cloudflare first, then openai, else none', () => {
    const cf = { accountId: 'a', apiToken: 't', baseUrl: 'https://x' }
    const oa = { baseUrl: 'https://y', apiKey: null, textModel: 'm', imageModel: 'i' }
    expect(createAiProviders({ cloudflare: cf, openai: oa }).defaultName).toBe('cloudflare')
    expect(createAiProviders({ cloudflare: null, openai: oa }).defaultName).toBe('openai')
    const none = createAiProviders({ cloudflare: null, openai: null })
    expect(none.defaultName).toBeNull()
    expect(none.get('cloudflare')).toBeNull()
    expect(none.get('openai')).toBeNull()
  })
})

describe('Workers AI (cloudflare)', () => {
  it('POSTs the messages to /accounts/{id}/ai/run/{model} with the bearer token and reads result.response and its usage', async () => {
    cfFake.queue({ text: 'Hi!', usage: 42 })
    const result = await cloudflare.chat({ messages, maxTokens: 50, temperature: 0.2 })
    expect(result).toEqual({
      text: 'Hi!',
      model: '@cf/meta/llama-3.1-8b-instruct',
      usage: { tokens: 42, estimated: false },
    })
    const [req] = cfFake.received
    expect(req!.path).toBe('/client/v4/accounts/acc-1/ai/run/@cf/meta/llama-3.1-8b-instruct')
    expect(req!.headers.authorization).toBe(`Bearer ${CF_TOKEN}`)
    expect(JSON.parse(req!.body)).toEqual({ messages, max_tokens: 50, temperature: 0.2 })
  })
  it('estimates about four characters a token when no usage is reported', async () => {
    cfFake.queue({ text: 'x'.repeat(20), usage: null })
    const result = await cloudflare.chat({ messages, model: '@cf/mistral/mistral-7b-instruct-v0.1' })
    // 'Be brief.' (9) + 'Hello there' (11) + 20 = 40 characters.
    expect(result.usage).toEqual({ tokens: 10, estimated: true })
    expect(cfFake.received[0]!.path).toMatch(/\/ai\/run\/@cf\/mistral\/mistral-7b-instruct-v0\.1$/)
  })
  it('takes a JSON-mode response given as an object', async () => {
    cfFake.queue({ body: { result: { response: { a: 1 } }, success: true, errors: [] } })
    expect((await cloudflare.chat({ messages })).text).toBe('{"a":1}')
  })
  it("a 5xx is a retryable ai_provider_error with Workers AI's message; a 4xx is not retryable", async () => {
    cfFake.queue({
      status: 503,
      body: { success: false, errors: [{ code: 3040, message: 'Capacity temporarily exceeded' }] },
    })
    const busy = await failure(cloudflare.chat({ messages }))
    expect(busy).toMatchObject({ code: 'ai_provider_error', status: 503, retryable: true })
    expect(busy.message).toBe('Workers AI answered 503: Capacity temporarily exceeded')
    cfFake.queue({ status: 400, body: { success: false, errors: [{ code: 5006, message: 'Bad input' }] } })
    expect(await failure(cloudflare.chat({ messages }))).toMatchObject({
      code: 'ai_provider_error',
      status: 400,
      retryable: false,
    })
    cfFake.queue({ status: 429, body: { success: false, errors: [{ message: 'Too many' }] } })
    expect(await failure(cloudflare.chat({ messages }))).toMatchObject({ status: 429, retryable: true })
  })
  it('never puts the token in a message, even when the provider echoes it', async () => {
    cfFake.queue({ status: 401, body: { success: false, errors: [{ message: `token ${CF_TOKEN} is not valid` }] } })
    const err = await failure(cloudflare.chat({ messages }))
    expect(err.message).not.toContain(CF_TOKEN)
    expect(err.message).toContain('[redacted]')
  })
  it('a 2xx that is not the protocol is ai_invalid_response', async () => {
    cfFake.queue({ body: { result: {}, success: true } })
    expect(await failure(cloudflare.chat({ messages }))).toMatchObject({ code: 'ai_invalid_response', retryable: true })
    cfFake.queue({ body: { success: false, errors: [] } })
    expect(await failure(cloudflare.chat({ messages }))).toMatchObject({ code: 'ai_provider_error', retryable: false })
  })
  it('refuses a model name that would change the URL', async () => {
    for (const model of ['../../accounts/other/ai/run/x', '@cf/../x', 'a?b=1', 'a#b', 'a b']) {
      expect(await failure(cloudflare.chat({ messages, model }))).toMatchObject({ code: 'bad_url', retryable: false })
    }
    expect(cfFake.received).toHaveLength(0)
  })
  it('images: PNG bytes from stable-diffusion with width and height, base64 from flux; an estimate as usage', async () => {
    const png = await cloudflare.image({ prompt: 'a red fox', width: 512, height: 256 })
    expect(png).toMatchObject({
      mimeType: 'image/png',
      model: '@cf/stabilityai/stable-diffusion-xl-base-1.0',
      usage: { tokens: 1003, estimated: true },
    })
    expect(Buffer.from(png.bytes).equals(tinyPng)).toBe(true)
    expect(JSON.parse(cfFake.received[0]!.body)).toEqual({ prompt: 'a red fox', width: 512, height: 256 })
    const flux = await cloudflare.image({ prompt: 'a red fox', model: '@cf/black-forest-labs/flux-1-schnell' })
    expect(Buffer.from(flux.bytes).equals(tinyPng)).toBe(true)
  })
  it('an unreachable provider is a retryable network_error naming no credential', async () => {
    const gone = createAiProviders(
      { cloudflare: { accountId: 'a', apiToken: CF_TOKEN, baseUrl: 'http://127.0.0.1:1/client/v4' }, openai: null },
      createOutboundClient({ allowPrivateNetwork: true }),
    )
    const err = await failure(gone.get('cloudflare')!.chat({ messages }))
    expect(err).toMatchObject({ code: 'network_error', retryable: true })
    expect(err.message).not.toContain(CF_TOKEN)
  })
})

describe('OpenAI-compatible (openai)', () => {
  it('POSTs /chat/completions with the model, messages and bearer key, and reads choices[0] and usage.total_tokens', async () => {
    openaiFake.queue({ text: 'Hello!', usage: 17 })
    const result = await openai.chat({ messages, maxTokens: 20, temperature: 0, json: true })
    expect(result).toEqual({ text: 'Hello!', model: 'llama3.1:8b', usage: { tokens: 17, estimated: false } })
    const [req] = openaiFake.received
    expect(req!.path).toBe('/v1/chat/completions')
    expect(req!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`)
    expect(JSON.parse(req!.body)).toEqual({
      model: 'llama3.1:8b',
      messages,
      max_tokens: 20,
      temperature: 0,
      response_format: { type: 'json_object' },
    })
  })
  it('estimates when a server reports no usage', async () => {
    openaiFake.queue({ text: 'abcd', usage: null })
    expect((await openai.chat({ messages })).usage).toEqual({ tokens: 6, estimated: true })
  })
  it('a local server without a key gets no Authorization header', async () => {
    const local = await startFakeOpenAi(null)
    try {
      const provider = createAiProviders({
        cloudflare: null,
        openai: { baseUrl: local.baseUrl, apiKey: null, textModel: 'qwen2.5', imageModel: 'x' },
      }).get('openai')!
      expect((await provider.chat({ messages })).text).toBe('ok')
      expect(local.received[0]!.headers.authorization).toBeUndefined()
    } finally {
      await local.close()
    }
  })
  it('5xx retryable, 4xx not; the key never in the message', async () => {
    openaiFake.queue({ status: 500, body: { error: { message: 'The server had an error' } } })
    expect(await failure(openai.chat({ messages }))).toMatchObject({
      code: 'ai_provider_error',
      status: 500,
      retryable: true,
      message: 'The OpenAI-compatible provider answered 500: The server had an error',
    })
    openaiFake.queue({ status: 401, body: { error: { message: `Incorrect API key provided: ${OPENAI_KEY}` } } })
    const denied = await failure(openai.chat({ messages }))
    expect(denied).toMatchObject({ code: 'ai_provider_error', status: 401, retryable: false })
    expect(denied.message).not.toContain(OPENAI_KEY)
  })
  it('images: /images/generations with size and b64_json', async () => {
    const image = await openai.image({ prompt: 'a red fox', width: 1024, height: 1024 })
    expect(image).toMatchObject({ mimeType: 'image/png', model: 'dall-e-3', usage: { estimated: true } })
    expect(JSON.parse(openaiFake.received[0]!.body)).toEqual({
      model: 'dall-e-3',
      prompt: 'a red fox',
      n: 1,
      response_format: 'b64_json',
      size: '1024x1024',
    })
    openaiFake.queue({ body: { data: [{ b64_json: Buffer.from('not an image').toString('base64') }] } })
    expect(await failure(openai.image({ prompt: 'x' }))).toMatchObject({ code: 'ai_invalid_response' })
  })
})
