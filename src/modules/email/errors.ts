import { isAppError } from '../../lib/errors.js'
import type { EmailChannel } from '../../lib/mail/index.js'

/** send_email's typed failures (automation spec, the send_email error table). */
export type EmailErrorCode =
  | 'email_quota_exceeded'
  | 'email_upstream_quota_exceeded'
  | 'email_recipient_not_allowed'
  | 'email_no_channel'
  | 'email_no_capacity'
  | 'email_send_failed'

/**
 * A refusal of the email service: the spec's code, `status` (what a blocking trigger answers, as a step
 * error's statusCode) and `retryable` (whether trying again later can help). Not an HTTP error: it is
 * raised in process (send_email) and turned into a step error there.
 */
export class EmailError extends Error {
  override name = 'EmailError'
  constructor(
    readonly code: EmailErrorCode,
    message: string,
    readonly details: Record<string, unknown>,
    readonly status: number,
    readonly retryable: boolean,
  ) {
    super(message)
  }
}

export function isEmailError(err: unknown): err is EmailError {
  return err instanceof EmailError
}

// Replies that mean "you are sending too much" rather than "this message is refused":
// SMTP 421 (service not available, try later: how providers throttle), 452 (insufficient storage, too many
// recipients), 454 (temporary authentication failure: too many logins); REST 429 (rate limited).
const smtpQuotaReplies = new Set([421, 452, 454])

/**
 * What a transport failure (lib/mail's service_unavailable carrying `details.status`: the SMTP reply code,
 * the provider's HTTP status, or null when nobody answered) means for send_email (decision 037):
 * - the provider's rate limit or cap → email_upstream_quota_exceeded (retryable; the channel cools off);
 * - anything else → email_send_failed, whose status is the provider's HTTP status for REST, 503 when nobody
 *   answered or an SMTP server answered a transient 4xx, 422 for a permanent SMTP 5xx refusal; retryable
 *   exactly when that status is 5xx.
 * Anything that is not such a failure is returned unchanged.
 */
export function transportFailure(channel: EmailChannel, err: unknown): unknown {
  if (!isAppError(err) || err.code !== 'service_unavailable') return err
  const raw = err.details.status
  const reply = typeof raw === 'number' ? raw : null
  const quota = reply !== null && (channel === 'rest_api' ? reply === 429 : smtpQuotaReplies.has(reply))
  if (quota) {
    return new EmailError(
      'email_upstream_quota_exceeded',
      'The email provider is limiting what this server sends; try again later',
      { channel, reply },
      429,
      true,
    )
  }
  const status = reply === null ? 503 : channel === 'rest_api' ? reply : reply >= 500 ? 422 : 503
  const message =
    reply === null ? 'The email provider could not be reached' : `The email provider refused the message (${reply})`
  return new EmailError('email_send_failed', message, { channel, reply }, status, status >= 500)
}
