export { createMailer } from './create-mailer.js'
export type { EmailChannel, EmailConfig, MailMessage, Mailer, MailerDeps, SendResult } from './types.js'
