/**
 * Why a provider call failed:
 * - `ai_provider_error`: the provider answered with an error status (`status`); retryable after 408, 429 and 5xx;
 * - `ai_invalid_response`: a 2xx answer that is not the protocol's shape (retryable: the next answer may be);
 * - `timed_out`, `network_error`, `aborted`, `too_large`, `bad_url`: from lib/outbound (the first two retryable).
 */
export type AiProviderErrorCode =
  | 'ai_provider_error'
  | 'ai_invalid_response'
  | 'timed_out'
  | 'network_error'
  | 'aborted'
  | 'too_large'
  | 'bad_url'

/** The one error a provider rejects with; its message names the provider and host at most, never a key. */
export class AiProviderError extends Error {
  override name = 'AiProviderError'
  constructor(
    readonly code: AiProviderErrorCode,
    message: string,
    readonly retryable: boolean,
    /** The provider's HTTP status, when it answered. */
    readonly status: number | null = null,
  ) {
    super(message)
  }
}

export function isAiProviderError(err: unknown): err is AiProviderError {
  return err instanceof AiProviderError
}

/** True for the statuses worth trying again: 408, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}
