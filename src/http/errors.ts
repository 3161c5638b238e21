import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { AppError, type ErrorCode, type ErrorEnvelope } from '../lib/errors.js'
import { requestIdOf, type AppEnv } from '../lib/http/index.js'
import type { Logger } from '../lib/log.js'
import { requestPath } from './paths.js'

const codeForStatus: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

/** Anything thrown becomes an AppError; what we did not anticipate becomes `internal`. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof HTTPException) {
    const code = codeForStatus[err.status]
    if (code) return new AppError(code, err.message || 'Request refused', {})
  }
  return new AppError('internal', 'Internal server error', {}, { cause: err })
}

/** The one place that writes the error envelope. Server faults are logged, and their cause never leaves. */
export function renderError(err: unknown, c: Context<AppEnv>, log: Logger): Response {
  const appError = toAppError(err)
  const requestId = requestIdOf(c)
  const details = appError.code === 'internal' ? { requestId } : appError.details
  if (appError.status >= 500) {
    log.error({ reqId: requestId, code: appError.code, err: appError.cause ?? appError }, 'request failed')
  }
  const body: ErrorEnvelope = { error: appError.code, message: appError.message, details }
  return c.json(body, appError.status, appError.headers)
}

/** Unknown routes answer 404 `not_found` in the envelope. */
export function renderNotFound(c: Context<AppEnv>): Response {
  // An alias that matches nothing has no successor to advertise.
  c.env?.outgoing?.removeHeader('Deprecation')
  c.env?.outgoing?.removeHeader('Link')
  const path = requestPath(c.req.raw)
  const body: ErrorEnvelope = { error: 'not_found', message: `No route for ${c.req.method} ${path}`, details: {} }
  return c.json(body, 404)
}
