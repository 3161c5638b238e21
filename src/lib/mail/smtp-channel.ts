import { createTransport } from 'nodemailer'
import { AppError } from '../errors.js'
import type { Logger } from '../log.js'
import type { MailChannel } from './types.js'

/** The email_binding channel: nodemailer over smtp:// or smtps:// (credentials in the URL). Throws nothing until send. */
export function createSmtpChannel(smtpUrl: string, from: string, timeoutMs: number, log?: Logger): MailChannel {
  // The send as a whole is also bounded by the caller's signal; these stop a silent server early.
  const transport = createTransport({
    url: smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // Messages carry no attachments; nothing should make the composer read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  })
  return {
    async send(message, signal) {
      const { to, subject, text, html, replyTo } = message
      try {
        // Fields are picked, never spread: nodemailer would act on extras such as bcc or file attachments.
        const info = await transport.sendMail({
          from: message.from ?? from,
          to: typeof to === 'string' ? to : [...to],
          replyTo,
          subject,
          text,
          html,
          signal,
        })
        return { messageId: info.messageId, accepted: info.accepted.length > 0 && info.rejected.length === 0 }
      } catch (err) {
        // Only the code and reply number leave: nodemailer's messages and the server's replies can carry
        // the user name or the transcript, and the URL holds the password.
        const { code, responseCode } = err as { code?: unknown; responseCode?: unknown }
        const status = typeof responseCode === 'number' ? responseCode : null
        log?.warn(
          { channel: 'email_binding', code: typeof code === 'string' ? code : 'unknown', status },
          'email not sent',
        )
        const message = status === null ? 'Email provider could not be reached' : 'Email provider refused the message'
        throw new AppError('service_unavailable', message, { status })
      }
    },
    async close() {
      transport.close()
    },
  }
}
