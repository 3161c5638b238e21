/**
 * A failed call, as the API's error envelope (`{ error, message, details }`) states it. `status` is null when
 * no answer came (the network failed or the call was aborted). Subclasses let a caller branch with
 * `instanceof` on what it can act on; `code` carries the envelope's exact code for everything else.
 */
export class PlinthError extends Error {
  override readonly name: string = 'PlinthError'
  constructor(
    readonly status: number | null,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

/** 400 / 422: the request was malformed or failed validation; `details` names the fields. */
export class ValidationError extends PlinthError {
  override readonly name = 'ValidationError'
}
/** 401: no credential, or one the instance does not accept (expired session, revoked key). */
export class UnauthorizedError extends PlinthError {
  override readonly name = 'UnauthorizedError'
}
/** 403: the credential is good but lacks the permission. */
export class ForbiddenError extends PlinthError {
  override readonly name: string = 'ForbiddenError'
}
/**
 * 403 `mfa_required`: the account has two-factor authentication on and the sign-in sent no code. Sign in again
 * with `code` (or pass `totp` to `auth.signIn`, which asks for it and retries).
 */
export class MfaRequiredError extends ForbiddenError {
  override readonly name = 'MfaRequiredError'
}
/** 404: no such resource, or one the caller may not see. */
export class NotFoundError extends PlinthError {
  override readonly name = 'NotFoundError'
}
/**
 * 409 / 412: a conflict or a failed precondition: a stale version (`precondition_failed` for If-Match,
 * `conflict` for `_version`), a unique value taken (`already_exists`).
 */
export class ConflictError extends PlinthError {
  override readonly name = 'ConflictError'
}
/** 429: rate limited; `retryAfter` is the seconds the server asked to wait, when it said. */
export class RateLimitError extends PlinthError {
  override readonly name = 'RateLimitError'
  retryAfter: number | undefined
}
/** No answer: the server could not be reached, or the call was aborted. */
export class NetworkError extends PlinthError {
  override readonly name = 'NetworkError'
}

/** The error class for an answer's status. */
export function errorFor(status: number, code: string, message: string, details: Record<string, unknown>): PlinthError {
  if (status === 400 || status === 422) return new ValidationError(status, code, message, details)
  if (status === 401) return new UnauthorizedError(status, code, message, details)
  if (status === 403 && code === 'mfa_required') return new MfaRequiredError(status, code, message, details)
  if (status === 403) return new ForbiddenError(status, code, message, details)
  if (status === 404) return new NotFoundError(status, code, message, details)
  if (status === 409 || status === 412) return new ConflictError(status, code, message, details)
  if (status === 429) return new RateLimitError(status, code, message, details)
  return new PlinthError(status, code, message, details)
}
