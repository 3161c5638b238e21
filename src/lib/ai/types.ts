/**
 * The AI providers behind the ai_* operations (automation spec "Operation configurations", addendum §6):
 * one small interface, one file per wire protocol. The providers know nothing of projects, quotas or
 * files; the ai module counts tokens and stores images.
 */

export type AiProviderName = 'cloudflare' | 'openai'
export const aiProviderNames: readonly AiProviderName[] = ['cloudflare', 'openai']

export interface AiMessage {
  readonly role: 'system' | 'user' | 'assistant'
  readonly content: string
}

/** Tokens a call used: the provider's figure, or an estimate (`estimated`) when it gave none. */
export interface AiUsage {
  readonly tokens: number
  readonly estimated: boolean
}

export interface AiChatRequest {
  readonly messages: readonly AiMessage[]
  /** The provider's default when absent. */
  readonly model?: string | undefined
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  /** The caller wants a JSON object back (the instructions say so too; OpenAI-compatible servers also get response_format). */
  readonly json?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

export interface AiChatResult {
  readonly text: string
  readonly model: string
  readonly usage: AiUsage
}

export interface AiImageRequest {
  readonly prompt: string
  readonly model?: string | undefined
  readonly width?: number | undefined
  readonly height?: number | undefined
  readonly signal?: AbortSignal | undefined
}

export interface AiImageResult {
  readonly bytes: Uint8Array
  /** image/png, image/jpeg or image/webp, read from the bytes. */
  readonly mimeType: string
  readonly model: string
  readonly usage: AiUsage
}

/** One configured provider. Every failure is an AiProviderError whose message never holds a credential. */
export interface AiProvider {
  readonly name: AiProviderName
  chat(request: AiChatRequest): Promise<AiChatResult>
  image(request: AiImageRequest): Promise<AiImageResult>
}
