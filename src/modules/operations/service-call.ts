import { isAppError, type AppError } from '../../lib/errors.js'
import { StepError } from './types.js'

/** Whether trying a failed call again can help: a timeout, a rate limit, a server fault (408, 429, 5xx). */
export function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429
}

/** A service's refusal as a typed step error: its code (or the one `codes` maps it to), message, details and status; retryable per retryableStatus. */
export function stepErrorFrom(err: AppError, codes: Partial<Record<string, string>> = {}): StepError {
  return new StepError(codes[err.code] ?? err.code, err.message, err.details, err.status, retryableStatus(err.status))
}

/** Runs a service call made as the run's principal; an API refusal becomes stepErrorFrom's step error, anything else passes. */
export async function throughService<T>(
  call: () => Promise<T>,
  codes: Partial<Record<string, string>> = {},
): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (!isAppError(err)) throw err
    throw stepErrorFrom(err, codes)
  }
}
