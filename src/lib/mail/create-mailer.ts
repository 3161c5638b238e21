import { AppError } from '../errors.js'
import { createRestApiChannel } from './rest-api-channel.js'
import { createSmtpChannel } from './smtp-channel.js'
import {
  maxRecipients,
  type EmailConfig,
  type MailChannel,
  type MailMessage,
  type Mailer,
  type MailerDeps,
} from './types.js'

const defaultTimeoutMs = 10_000
// One bare address: a list, a group or a display name could smuggle in a second recipient
// (a reset link sent to "victim@x, attacker@y"), and providers parse those forms differently.
const plainAddress = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/
// A display name without anything an address parser would read as structure (quotes, commas, brackets).
const displayName = /^[^\r\n<>()[\]\\,;:"@]{1,100}$/

/** Whether `value` is one plain address (`someone@example.com`, at most 254 characters). Throws nothing. */
export function isPlainAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && plainAddress.test(value)
}

/** Whether `value` is a sender: a plain address, or `Name <address>`. Throws nothing. */
export function isSender(value: unknown): value is string {
  if (isPlainAddress(value)) return true
  if (typeof value !== 'string') return false
  const named = /^(.*) <([^<>]+)>$/.exec(value)
  return named !== null && displayName.test(named[1]!.trim()) && isPlainAddress(named[2])
}

/**
 * The mailer for the configured channel. Throws internal when the channel's own settings are missing;
 * an instance without a channel still gets a mailer, whose sends throw service_unavailable.
 */
export function createMailer(config: EmailConfig, deps: MailerDeps = {}): Mailer {
  const timeoutMs = deps.timeoutMs ?? defaultTimeoutMs
  const channel = openChannel(config, timeoutMs, deps)
  let closed = false
  return {
    channel: config.channel,
    async send(message) {
      if (closed) throw new AppError('service_unavailable', 'The mailer is closed')
      checkMessage(message)
      const result = await channel.send(message, AbortSignal.timeout(timeoutMs))
      deps.log?.debug({ channel: config.channel, messageId: result.messageId }, 'email sent')
      return result
    },
    async close() {
      if (closed) return
      closed = true
      await channel.close()
    },
  }
}

function openChannel(config: EmailConfig, timeoutMs: number, deps: MailerDeps): MailChannel {
  switch (config.channel) {
    case 'email_binding':
      if (!config.smtpUrl) throw new AppError('internal', 'The email_binding channel needs an SMTP URL')
      return createSmtpChannel(config.smtpUrl, config.from, timeoutMs, deps.log)
    case 'rest_api':
      if (!config.apiUrl || !config.apiKey)
        throw new AppError('internal', 'The rest_api channel needs an API URL and key')
      return createRestApiChannel(config.apiUrl, config.apiKey, config.from, deps.log)
    case 'email_no_channel':
      return {
        send: async () => {
          throw new AppError('service_unavailable', 'No email channel is configured')
        },
        close: async () => {},
      }
    default:
      throw new AppError('internal', 'Unknown email channel')
  }
}

function checkMessage(message: MailMessage): void {
  const { to, subject, text, html, from, replyTo } = message
  const list = Array.isArray(to) ? (to as unknown[]) : [to]
  if (list.length === 0 || list.length > maxRecipients || !list.every(isPlainAddress)) {
    throw new AppError(
      'invalid_request',
      `An email goes to plain addresses (one, or a list of at most ${maxRecipients})`,
    )
  }
  if ((from !== undefined && !isSender(from)) || (replyTo !== undefined && !isPlainAddress(replyTo))) {
    throw new AppError(
      'invalid_request',
      'An email sender is a plain address or Name <address>; a reply-to is a plain address',
    )
  }
  if (typeof subject !== 'string' || /[\r\n]/.test(subject)) {
    throw new AppError('invalid_request', 'An email subject is one line of text')
  }
  if (typeof text !== 'string' || (html !== undefined && typeof html !== 'string')) {
    throw new AppError('invalid_request', 'An email body is text, with optional HTML')
  }
}
