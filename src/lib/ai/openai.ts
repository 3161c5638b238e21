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

export interface OpenAiOptions {
  /** `https://api.openai.com/v1` unless set: any OpenAI-compatible server (Ollama `http://127.0.0.1:11434/v1`, vLLM, llama.cpp). */
  readonly baseUrl: string
  /** Sent as a bearer token; local servers often need none. */
  readonly apiKey: string | null
  readonly textModel: string
  readonly imageModel: string
}

export const openAiDefaults = {
  baseUrl: 'https://api.openai.com/v1',
  textModel: 'gpt-4o-mini',
  imageModel: 'dall-e-3',
} as const

/**
 * Any OpenAI-compatible endpoint: `POST {base}/chat/completions` (the first choice's message content,
 * `usage.total_tokens`) and `POST {base}/images/generations` with `response_format: b64_json`.
 */
export function createOpenAiProvider(options: OpenAiOptions, outbound: OutboundClient): AiProvider {
  const transport: ProviderTransport = {
    outbound,
    label: 'The OpenAI-compatible provider',
    secrets: options.apiKey ? [options.apiKey] : [],
  }
  const base = options.baseUrl.replace(/\/+$/, '')
  const auth: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}

  function checkModel(model: string): string {
    if (!isModelName(model)) throw new AiProviderError('bad_url', `"${model.slice(0, 60)}" is not a model name`, false)
    return model
  }

  return {
    name: 'openai',

    async chat(request: AiChatRequest) {
      const model = checkModel(request.model ?? options.textModel)
      const body: Record<string, unknown> = { model, messages: request.messages }
      if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens
      if (request.temperature !== undefined) body.temperature = request.temperature
      if (request.json) body.response_format = { type: 'json_object' }
      const res = await postJson(transport, `${base}/chat/completions`, body, auth, request.signal)
      const answer = jsonOf(transport, res) as {
        model?: unknown
        choices?: { message?: { content?: unknown } }[]
        usage?: unknown
      } | null
      const content = answer?.choices?.[0]?.message?.content
      if (typeof content !== 'string')
        throw new AiProviderError(
          'ai_invalid_response',
          'The OpenAI-compatible provider answered without choices[0].message.content',
          true,
          res.status,
        )
      const counted = usageTokens(answer?.usage)
      const usage =
        counted === null
          ? { tokens: estimateTokens(...request.messages.map((m) => m.content), content), estimated: true }
          : { tokens: counted, estimated: false }
      return {
        text: content,
        model: typeof answer?.model === 'string' && answer.model !== '' ? answer.model : model,
        usage,
      }
    },

    async image(request: AiImageRequest) {
      const model = checkModel(request.model ?? options.imageModel)
      const body: Record<string, unknown> = { model, prompt: request.prompt, n: 1, response_format: 'b64_json' }
      if (request.width !== undefined || request.height !== undefined)
        body.size = `${request.width ?? request.height}x${request.height ?? request.width}`
      const res = await postJson(transport, `${base}/images/generations`, body, auth, request.signal)
      const answer = jsonOf(transport, res) as { data?: { b64_json?: unknown }[]; usage?: unknown } | null
      const encoded = answer?.data?.[0]?.b64_json
      if (typeof encoded !== 'string')
        throw new AiProviderError(
          'ai_invalid_response',
          'The OpenAI-compatible provider answered without data[0].b64_json',
          true,
          res.status,
        )
      const bytes = Buffer.from(encoded, 'base64')
      const mimeType = sniffImage(bytes)
      if (!mimeType)
        throw new AiProviderError(
          'ai_invalid_response',
          'The OpenAI-compatible provider answered with bytes that are not an image',
          true,
          res.status,
        )
      const counted = usageTokens(answer?.usage)
      return {
        bytes,
        mimeType,
        model,
        usage:
          counted === null
            ? { tokens: imageTokenEstimate(request.prompt), estimated: true }
            : { tokens: counted, estimated: false },
      }
    },
  }
}
