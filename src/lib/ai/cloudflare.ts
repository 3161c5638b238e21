import type { OutboundClient } from '../outbound/index.js'
import { AiProviderError } from './errors.js'
import {
  estimateTokens,
  imageTokenEstimate,
  isModelName,
  jsonOf,
  postJson,
  sniffImage,
  usageTokens,
  type ProviderTransport,
} from './http.js'
import type { AiChatRequest, AiImageRequest, AiProvider } from './types.js'

export interface CloudflareOptions {
  readonly accountId: string
  readonly apiToken: string
  /** `https://api.cloudflare.com/client/v4` unless set (an AI Gateway, a test's fake server). */
  readonly baseUrl: string
  readonly textModel?: string
  readonly imageModel?: string
}

export const cloudflareDefaults = {
  baseUrl: 'https://api.cloudflare.com/client/v4',
  textModel: '@cf/meta/llama-3.1-8b-instruct',
  imageModel: '@cf/stabilityai/stable-diffusion-xl-base-1.0',
} as const

/**
 * Workers AI over its REST API: `POST {base}/accounts/{account}/ai/run/{model}` with a bearer token.
 * Text models answer `{ result: { response, usage? }, success, errors }`; image models answer the image
 * bytes (stable-diffusion) or `{ result: { image: <base64> } }` (flux).
 */
export function createCloudflareProvider(options: CloudflareOptions, outbound: OutboundClient): AiProvider {
  const transport: ProviderTransport = { outbound, label: 'Workers AI', secrets: [options.apiToken] }
  const base = options.baseUrl.replace(/\/+$/, '')
  const auth = { authorization: `Bearer ${options.apiToken}` }

  function urlFor(model: string): string {
    if (!isModelName(model))
      throw new AiProviderError('bad_url', `Workers AI: "${model.slice(0, 60)}" is not a model name`, false)
    return `${base}/accounts/${encodeURIComponent(options.accountId)}/ai/run/${model}`
  }

  return {
    name: 'cloudflare',

    async chat(request: AiChatRequest) {
      const model = request.model ?? options.textModel ?? cloudflareDefaults.textModel
      const body: Record<string, unknown> = { messages: request.messages }
      if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens
      if (request.temperature !== undefined) body.temperature = request.temperature
      const res = await postJson(transport, urlFor(model), body, auth, request.signal)
      const answer = jsonOf(transport, res) as {
        success?: unknown
        result?: { response?: unknown; usage?: unknown }
      } | null
      if (answer?.success === false)
        throw new AiProviderError('ai_provider_error', 'Workers AI answered success: false', false, res.status)
      const response = answer?.result?.response
      // JSON-mode models may give the object itself rather than its text.
      const text =
        typeof response === 'string'
          ? response
          : response !== undefined && response !== null && typeof response === 'object'
            ? JSON.stringify(response)
            : null
      if (text === null)
        throw new AiProviderError(
          'ai_invalid_response',
          'Workers AI answered without result.response',
          true,
          res.status,
        )
      const counted = usageTokens(answer?.result?.usage)
      const usage =
        counted === null
          ? { tokens: estimateTokens(...request.messages.map((m) => m.content), text), estimated: true }
          : { tokens: counted, estimated: false }
      return { text, model, usage }
    },

    async image(request: AiImageRequest) {
      const model = request.model ?? options.imageModel ?? cloudflareDefaults.imageModel
      const body: Record<string, unknown> = { prompt: request.prompt }
      if (request.width !== undefined) body.width = request.width
      if (request.height !== undefined) body.height = request.height
      const res = await postJson(transport, urlFor(model), body, auth, request.signal)
      let bytes: Uint8Array = res.body
      let usage: number | null = null
      if (!(res.headers.get('content-type') ?? '').startsWith('image/')) {
        const answer = jsonOf(transport, res) as { result?: { image?: unknown; usage?: unknown } } | null
        const image = answer?.result?.image
        if (typeof image !== 'string')
          throw new AiProviderError(
            'ai_invalid_response',
            'Workers AI answered with neither an image nor result.image',
            true,
            res.status,
          )
        bytes = Buffer.from(image, 'base64')
        usage = usageTokens(answer?.result?.usage)
      }
      const mimeType = sniffImage(bytes)
      if (!mimeType)
        throw new AiProviderError(
          'ai_invalid_response',
          'Workers AI answered with bytes that are not an image',
          true,
          res.status,
        )
      return {
        bytes,
        mimeType,
        model,
        usage:
          usage === null
            ? { tokens: imageTokenEstimate(request.prompt), estimated: true }
            : { tokens: usage, estimated: false },
      }
    },
  }
}
