export { createMailer, isPlainAddress, isSender } from './create-mailer.js'
export {
  maxRecipients,
  type EmailChannel,
  type EmailConfig,
  type MailMessage,
  type Mailer,
  type MailerDeps,
  type SendResult,
} from './types.js'
