import { AppError } from '../../../lib/errors.js'
import { StepError, stepErrorFrom } from '../../operations/index.js'
import type { RunError, StepRecord } from './execution.js'

/** How the executor types, describes and carries a step's failure, and stops a step its run's signal aborts. */

/** A step failure that ends the run (onError stop, retries exhausted), carried up through nested steps. */
export class StepFailed extends Error {
  constructor(readonly error: RunError) {
    super(error.message)
  }
}

/**
 * A service's refusal (AppError: forbidden, not_found, validation_error …) is a typed step error with the
 * same code, details and status; it is retryable only when trying again can help (408, 429, 5xx).
 */
export function asStepError(err: unknown): unknown {
  return err instanceof AppError ? stepErrorFrom(err) : err
}

export function describeFailure(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (err instanceof StepError)
    return {
      code: err.code,
      message: err.message,
      ...(Object.keys(err.details).length > 0 ? { details: err.details } : {}),
    }
  return { code: 'step_failed', message: err instanceof Error ? err.message : String(err) }
}

export function lastKey(records: readonly StepRecord[]): string | undefined {
  return records[records.length - 1]?.key
}

/** Settles with `promise`, or rejects with the signal's reason as soon as it aborts (an operation that ignores it still stops the run). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {}) // its own rejection is no longer anyone's concern
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}
