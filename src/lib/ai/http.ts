import { isOutboundError, type OutboundClient, type OutboundResponse } from '../outbound/index.js'
import { AiProviderError, isRetryableStatus } from './errors.js'

/** An answer can take a while (a long completion, an image); the run's own timeout still applies through the signal. */
export const providerTimeoutMs = 120_000
/** Images come back as base64 inside JSON: room for a few megapixels. */
export const maxProviderResponseBytes = 32 * 1024 * 1024

/** What a provider's calls share: where it sends, its credential (kept out of every message) and its name in messages. */
export interface ProviderTransport {
  readonly outbound: OutboundClient
  readonly label: string
  readonly secrets: readonly string[]
}

/** Replaces every credential in a text (a provider echoing a header back, say) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]')
  return out
}

/**
 * POSTs JSON to the provider. Redirects are not followed (the base URL is the operator's; an answer cannot
 * send the credential elsewhere). A non-2xx answer is ai_provider_error with the provider's own message
 * (at most 300 characters, credentials removed), retryable after 408, 429 and 5xx.
 * @throws AiProviderError
 */
export async function postJson(
  transport: ProviderTransport,
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<OutboundResponse> {
  let res: OutboundResponse
  try {
    res = await transport.outbound.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, image/*', ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
      timeoutMs: providerTimeoutMs,
      maxResponseBytes: maxProviderResponseBytes,
      credentialHeaders: Object.keys(headers),
      ...(signal ? { signal } : {}),
    })
  } catch (err) {
    if (!isOutboundError(err)) throw err
    const message = redact(`${transport.label}: ${err.message}`, transport.secrets)
    switch (err.code) {
      case 'timeout':
        throw new AiProviderError('timed_out', message, true)
      case 'network':
        throw new AiProviderError('network_error', message, true)
      case 'aborted':
        throw new AiProviderError('aborted', message, false)
      case 'too_large':
        throw new AiProviderError('too_large', message, false)
      default:
        throw new AiProviderError('bad_url', message, false)
    }
  }
  if (res.status < 200 || res.status > 299) {
    const detail = errorDetail(res)
    throw new AiProviderError(
      'ai_provider_error',
      redact(`${transport.label} answered ${res.status}${detail ? `: ${detail}` : ''}`, transport.secrets),
      isRetryableStatus(res.status),
      res.status,
    )
  }
  return res
}

/** The provider's error message, from Workers AI's `errors[0].message`, OpenAI's `error.message`, or the text. */
function errorDetail(res: OutboundResponse): string {
  let detail: string
  try {
    const body = res.json() as {
      errors?: { message?: unknown }[]
      error?: { message?: unknown } | string
      message?: unknown
    }
    const candidate =
      body?.errors?.[0]?.message ??
      (typeof body?.error === 'string' ? body.error : body?.error?.message) ??
      body?.message
    detail = typeof candidate === 'string' ? candidate : ''
  } catch {
    detail = res.text()
  }
  detail = detail.replace(/\s+/g, ' ').trim()
  return detail.length > 300 ? `${detail.slice(0, 300)}…` : detail
}

/** The JSON body of a 2xx answer; ai_invalid_response when it is not JSON. */
export function jsonOf(transport: ProviderTransport, res: OutboundResponse): unknown {
  try {
    return res.json()
  } catch {
    throw new AiProviderError(
      'ai_invalid_response',
      `${transport.label} answered with something that is not JSON`,
      true,
      res.status,
    )
  }
}

/** A rough token count for text when a provider reports none: about four characters a token (decision 039). */
export function estimateTokens(...texts: readonly string[]): number {
  const chars = texts.reduce((sum, t) => sum + t.length, 0)
  return Math.max(1, Math.ceil(chars / 4))
}

/** What an image costs when the provider reports no usage: the prompt's estimate plus a flat 1,000 (decision 039). */
export const imageTokenEstimate = (prompt: string) => estimateTokens(prompt) + 1_000

/** The image type from its first bytes (PNG, JPEG, WebP, GIF); null when it is none of them. */
export function sniffImage(bytes: Uint8Array): string | null {
  const b = bytes
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (
    b.length >= 12 &&
    Buffer.from(b.subarray(0, 4)).toString('latin1') === 'RIFF' &&
    Buffer.from(b.subarray(8, 12)).toString('latin1') === 'WEBP'
  )
    return 'image/webp'
  if (b.length >= 6 && Buffer.from(b.subarray(0, 3)).toString('latin1') === 'GIF') return 'image/gif'
  return null
}

/** Usage from `{ total_tokens }` or `{ prompt_tokens, completion_tokens }`; null when neither is a number. */
export function usageTokens(usage: unknown): number | null {
  if (typeof usage !== 'object' || usage === null) return null
  const u = usage as Record<string, unknown>
  if (typeof u.total_tokens === 'number' && Number.isFinite(u.total_tokens) && u.total_tokens >= 0)
    return Math.ceil(u.total_tokens)
  const parts = [u.prompt_tokens, u.completion_tokens, u.input_tokens, u.output_tokens].filter(
    (n): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0,
  )
  return parts.length > 0 ? Math.ceil(parts.reduce((a, n) => a + n, 0)) : null
}

/** A model name as it may be put in a URL path or a body: letters, digits and @ . _ : - in segments split by `/`, no `.` or `..` segment. */
export function isModelName(model: string): boolean {
  if (model.length < 1 || model.length > 200) return false
  return model.split('/').every((segment) => /^[A-Za-z0-9@._:-]+$/.test(segment) && segment !== '.' && segment !== '..')
}
