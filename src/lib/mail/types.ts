import type { Logger } from '../log.js'

export type EmailChannel = 'email_binding' | 'rest_api' | 'email_no_channel'

/** The email part of Plinth's configuration (`Config['email']` satisfies it). */
export interface EmailConfig {
  readonly channel: EmailChannel
  readonly from: string
  readonly smtpUrl: string | null
  readonly apiUrl: string | null
  readonly apiKey: string | null
}

export interface MailMessage {
  /**
   * One plain address (`someone@example.com`), or a list of them (one message to all, at most
   * `maxRecipients`): never a list written in a string, a group or a display name.
   */
  to: string | readonly string[]
  subject: string
  text: string
  html?: string
  /** The sender instead of the configured one: a plain address, or `Name <address>`. */
  from?: string
  /** A plain address replies go to. */
  replyTo?: string
}

/** The most recipients one message may have. */
export const maxRecipients = 50

export interface SendResult {
  /** The Message-ID (SMTP) or the provider's id (REST); empty when the provider returned none. */
  messageId: string
  accepted: boolean
}

export interface Mailer {
  readonly channel: EmailChannel
  /** Sends one message; throws invalid_request on a bad recipient or subject, service_unavailable when it cannot be sent. */
  send(message: MailMessage): Promise<SendResult>
  /** Releases connections; later sends fail with service_unavailable. */
  close(): Promise<void>
}

export interface MailerDeps {
  log?: Logger
  /** Longest a single send may take, connecting included. Default 10 s. */
  timeoutMs?: number
}

/** What a channel implements; createMailer adds checks and the closed state around it. */
export interface MailChannel {
  send(message: MailMessage, signal: AbortSignal): Promise<SendResult>
  close(): Promise<void>
}
