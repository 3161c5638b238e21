/**
 * The one error type of Plinth and the catalog from code to HTTP status.
 * The spec's upper-case spellings (option and scan endpoints) are codes of their own.
 */
export const errorStatus = {
  invalid_request: 400,
  missing_field: 400,
  invalid_field: 400,
  invalid_name: 400,
  reserved_name: 400,
  reserved_field: 400,
  duplicate_field: 400,
  limit_exceeded: 400,
  unauthorized: 401,
  forbidden: 403,
  signup_forbidden: 403,
  mfa_required: 403,
  account_banned: 403,
  install_needs_person: 403,
  quota_exceeded: 403,
  FORBIDDEN: 403,
  not_found: 404,
  record_not_found: 404,
  collection_not_found: 404,
  COLLECTION_NOT_FOUND: 404,
  NOT_FOUND: 404,
  method_not_allowed: 405,
  already_exists: 409,
  conflict: 409,
  collection_migrating: 409,
  system_flow_readonly: 409,
  request_timeout: 408,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  validation_error: 422,
  VALIDATION_ERROR: 422,
  rate_limited: 429,
  too_many_requests: 429,
  internal: 500,
  ddl_error: 500,
  service_unavailable: 503,
} as const

export type ErrorCode = keyof typeof errorStatus
export type ErrorStatus = (typeof errorStatus)[ErrorCode]

export class AppError extends Error {
  override name = 'AppError'
  readonly status: ErrorStatus
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.status = errorStatus[code]
    this.headers = options?.headers
  }
  /** Extra response headers, e.g. Retry-After on rate_limited. */
  readonly headers: Record<string, string> | undefined
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError
}

/** The wire shape of every error response. */
export interface ErrorEnvelope {
  error: ErrorCode
  message: string
  details: Record<string, unknown>
}
