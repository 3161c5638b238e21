import { createOutboundClient, type OutboundClient } from '../outbound/index.js'
import { createCloudflareProvider, type CloudflareOptions } from './cloudflare.js'
import { createOpenAiProvider, type OpenAiOptions } from './openai.js'
import type { AiProvider, AiProviderName } from './types.js'

export { cloudflareDefaults, createCloudflareProvider, type CloudflareOptions } from './cloudflare.js'
export { AiProviderError, isAiProviderError, type AiProviderErrorCode } from './errors.js'
export { estimateTokens, isModelName, redact } from './http.js'
export { createOpenAiProvider, openAiDefaults, type OpenAiOptions } from './openai.js'
export * from './types.js'

/** The providers the operator configured (config.ai), null where one is not. */
export interface AiProvidersOptions {
  readonly cloudflare: CloudflareOptions | null
  readonly openai: OpenAiOptions | null
}

/** The configured providers by name, and the one a step without `provider` uses. */
export interface AiProviders {
  get(name: AiProviderName): AiProvider | null
  /** cloudflare when configured, else openai when configured, else null. */
  readonly defaultName: AiProviderName | null
}

/**
 * Builds the configured providers. Their base URLs are the operator's own setting, not a flow's input, so
 * they are reached even on a loopback or private address (a local Ollama), whatever ALLOW_PRIVATE_NETWORK
 * says; only URLs built from them are ever requested, and redirects are not followed (decision 039).
 */
export function createAiProviders(
  options: AiProvidersOptions,
  outbound: OutboundClient = createOutboundClient({ allowPrivateNetwork: true }),
): AiProviders {
  const cloudflare = options.cloudflare ? createCloudflareProvider(options.cloudflare, outbound) : null
  const openai = options.openai ? createOpenAiProvider(options.openai, outbound) : null
  return {
    get: (name) => (name === 'cloudflare' ? cloudflare : name === 'openai' ? openai : null),
    defaultName: cloudflare ? 'cloudflare' : openai ? 'openai' : null,
  }
}
