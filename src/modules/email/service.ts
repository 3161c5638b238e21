import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import { AppError } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import type { Logger } from '../../lib/log.js'
import { isPlainAddress, isSender, maxRecipients, type EmailChannel, type Mailer } from '../../lib/mail/index.js'
import type { Principal } from '../../lib/principal.js'
import type { AccessService } from '../access/index.js'
import { EmailError, transportFailure } from './errors.js'
import { ReceiptBody, receiptIsGenuine } from './receipts.js'
import { createEmailStore, type LogQuery, type MessageRow } from './store.js'

export interface EmailDeps {
  systemDb: Kysely<any>
  clock: Clock
  log: Logger
  mailer: Pick<Mailer, 'channel' | 'send'>
  access: Pick<AccessService, 'authorize'>
  /** EMAIL_RECEIPT_SECRET: the shared secret delivery receipts are signed with; null when receipts are off. */
  receiptSecret: string | null
  /** How long the channel rests after the provider said it is sending too much (default 60 s). */
  coolOffMs?: number
}

/** One message as send_email hands it over, its templates already rendered. */
export interface OutgoingEmail {
  readonly to: string | readonly string[]
  readonly subject: string
  readonly text?: string
  readonly html?: string
  readonly from?: string
  readonly replyTo?: string
}

/** Where the message comes from and what the project may send today. */
export interface SendContext {
  /** The project's maxEmailsPerDay (automation quotas). */
  readonly dailyLimit: number
  readonly flowId?: string
  readonly runId?: string
  readonly stepKey?: string
}

/** send_email's output (automation spec). */
export interface SentEmail {
  readonly messageId: string
  readonly status: 'sent'
  readonly to: string | readonly string[]
  readonly channel: EmailChannel
  readonly quotaRemaining: number
}

/** One row of the message delivery log as it is read: never a subject or a body. */
export interface LoggedMessage {
  readonly id: string
  readonly messageId: string
  readonly recipient: string
  readonly channel: 'email_binding' | 'rest_api'
  readonly status: 'sent' | 'delivered'
  readonly flowId: string | null
  readonly runId: string | null
  readonly stepKey: string | null
  /** Milliseconds since the epoch. */
  readonly createdAt: number
  readonly deliveredAt: number | null
}

/** Today's UTC day, the span of the maxEmailsPerDay quota. */
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * Email (decision 037): sending with every check made before the transport is touched (channel,
 * recipients, the channel's cool-off, the project's daily quota reserved for every recipient at once),
 * the message delivery log (one row per recipient, `sent`, turned `delivered` by a signed receipt), and
 * the project's `emailsToday` for the quotas service.
 */
export function createEmailService(deps: EmailDeps) {
  const store = createEmailStore(deps.systemDb)
  const { mailer, clock } = deps
  const coolOffMs = deps.coolOffMs ?? 60_000
  // In process: after the provider's "too much", nothing is offered to it until this time (ms).
  let coolingUntil = 0

  return {
    /** The configured channel (email_binding, rest_api or email_no_channel). */
    channel: mailer.channel,
    /** Whether signed delivery receipts are accepted (EMAIL_RECEIPT_SECRET is set). */
    receipts: deps.receiptSecret !== null,

    /**
     * Sends one message to every recipient, or to none: every refusal comes before the transport is
     * touched. Throws EmailError email_no_channel, email_recipient_not_allowed, email_no_capacity,
     * email_quota_exceeded (limit, used, requested, remaining), then, from the transport,
     * email_upstream_quota_exceeded or email_send_failed. The run's start checked who may run the flow;
     * sending checks no further permission, and the log rows go to the actor's project.
     */
    async send(actor: Principal, message: OutgoingEmail, context: SendContext): Promise<SentEmail> {
      if (mailer.channel === 'email_no_channel') {
        throw new EmailError(
          'email_no_channel',
          'No email channel is configured on this server (SMTP_URL or EMAIL_API_URL)',
          {},
          503,
          false,
        )
      }
      const recipients = recipientsOf(message.to)
      if (message.from !== undefined && !isSender(message.from))
        throw notAllowed('from', 'The sender must be a plain address or Name <address>')
      if (message.replyTo !== undefined && !isPlainAddress(message.replyTo))
        throw notAllowed('replyTo', 'The reply-to must be one plain address')
      const now = clock.now()
      if (now < coolingUntil) {
        throw new EmailError(
          'email_no_capacity',
          'The email channel is resting after the provider limited it; try again later',
          { retryAfterMs: coolingUntil - now },
          503,
          true,
        )
      }
      const projectId = actor.projectId
      const day = dayOf(now)
      const requested = recipients.length
      const limit = context.dailyLimit
      const { taken, used } = await store.reserve(projectId, day, requested, limit)
      if (!taken) {
        const remaining = Math.max(0, limit - used)
        throw new EmailError(
          'email_quota_exceeded',
          `The project may send ${remaining} more email(s) today; this message has ${requested} recipient(s)`,
          { limit, used, requested, remaining },
          429,
          false,
        )
      }
      const text = message.text ?? textOf(message.html ?? '')
      let messageId: string
      try {
        const result = await mailer.send({
          to: Array.isArray(message.to) ? recipients : recipients[0]!,
          // A subject is one line: a template that gave a line break must not start a new header.
          subject: message.subject.replace(/[\r\n]+/g, ' '),
          text,
          ...(message.html !== undefined ? { html: message.html } : {}),
          ...(message.from !== undefined ? { from: message.from } : {}),
          ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
        })
        messageId = result.messageId || newId()
      } catch (err) {
        await store.release(projectId, day, requested)
        const failure = transportFailure(mailer.channel, err)
        if (failure instanceof EmailError && failure.code === 'email_upstream_quota_exceeded')
          coolingUntil = clock.now() + coolOffMs
        throw failure
      }
      const rows: MessageRow[] = recipients.map((recipient) => ({
        id: newId(),
        project_id: projectId,
        message_id: messageId,
        recipient: recipient.toLowerCase(),
        channel: mailer.channel,
        status: 'sent',
        flow_id: context.flowId ?? null,
        run_id: context.runId ?? null,
        step_key: context.stepKey ?? null,
        created_at: now,
        delivered_at: null,
      }))
      try {
        await store.insertMessages(rows)
      } catch (err) {
        // The message went out: a log that could not be written is reported, not a failed send (it would be sent again).
        deps.log.error({ err, projectId, messageId }, 'email sent but not logged')
      }
      return {
        messageId,
        status: 'sent',
        to: message.to,
        channel: mailer.channel,
        quotaRemaining: Math.max(0, limit - used - requested),
      }
    },

    /** The project's recipients counted today (its `emailsToday` in GET /automate/quotas). Throws nothing of its own. */
    async usage(projectId: string): Promise<{ emailsToday: number }> {
      return { emailsToday: await store.used(projectId, dayOf(clock.now())) }
    },

    /**
     * The message delivery log of the caller's project, newest first, filtered by status, recipient,
     * flow, run or message id: never a subject or a body. Throws unauthorized, forbidden (system/automate:read).
     */
    async list(actor: Principal, query: LogQuery): Promise<{ data: LoggedMessage[]; total: number }> {
      await deps.access.authorize(actor, 'system/automate:read')
      const { rows, total } = await store.list(actor.projectId, query)
      return { data: rows.map(wireOf), total }
    },

    /**
     * A provider's delivery receipt (POST /api/v1/email/receipts): signed with EMAIL_RECEIPT_SECRET over
     * `<timestamp>.<raw body>`, the timestamp within five minutes. `delivered` receipts turn the named
     * message's `sent` rows (one recipient's, when named) into `delivered`; other statuses are ignored.
     * Throws unauthorized (no secret configured, a missing, stale or wrong signature: nothing changes),
     * invalid_request (a body that is not a receipt).
     */
    async receipt(
      rawBody: string,
      timestamp: string | undefined,
      signature: string | undefined,
    ): Promise<{ updated: number; ignored: number }> {
      const secret = deps.receiptSecret
      if (secret === null || !receiptIsGenuine(secret, rawBody, timestamp, signature, clock.seconds())) {
        throw new AppError(
          'unauthorized',
          'The receipt is not signed with the configured secret, or its timestamp is too old',
        )
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(rawBody)
      } catch {
        throw new AppError('invalid_request', 'Malformed JSON in request body')
      }
      const body = ReceiptBody.safeParse(parsed)
      if (!body.success)
        throw new AppError(
          'invalid_request',
          'A receipt is { messageId, recipient?, status } or a list of at most 100 of them',
        )
      const receipts = Array.isArray(body.data) ? body.data : [body.data]
      let updated = 0
      let ignored = 0
      const at = clock.now()
      for (const r of receipts) {
        if (r.status !== 'delivered') {
          ignored++
          continue
        }
        updated += await store.markDeliveredInAllProjects(r.messageId, r.recipient?.toLowerCase() ?? null, at)
      }
      return { updated, ignored }
    },
  }
}

export type EmailService = ReturnType<typeof createEmailService>

function notAllowed(field: string, message: string, details: Record<string, unknown> = {}): EmailError {
  return new EmailError('email_recipient_not_allowed', message, { field, ...details }, 422, false)
}

/**
 * The distinct recipients (compared without case, the first spelling kept), each one plain address: a list in a
 * string, a display name or a group could reach someone the step does not name. Throws
 * email_recipient_not_allowed naming the position of the first that is not.
 */
function recipientsOf(to: string | readonly string[]): string[] {
  const list = typeof to === 'string' ? [to] : [...to]
  if (list.length === 0) throw notAllowed('to', 'The message has no recipient')
  const seen = new Map<string, string>()
  for (const [index, address] of list.entries()) {
    if (!isPlainAddress(address))
      throw notAllowed('to', `Recipient ${index + 1} is not one plain address (someone@example.com)`, { index })
    if (!seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address)
  }
  if (seen.size > maxRecipients) throw notAllowed('to', `A message may go to at most ${maxRecipients} recipients`)
  return [...seen.values()]
}

/** A text alternative for an HTML-only message: tags dropped, the common entities read. */
function textOf(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/p>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .trim()
}

function wireOf(row: MessageRow): LoggedMessage {
  return {
    id: row.id,
    messageId: row.message_id,
    recipient: row.recipient,
    channel: row.channel === 'rest_api' ? 'rest_api' : 'email_binding',
    status: row.status === 'delivered' ? 'delivered' : 'sent',
    flowId: row.flow_id,
    runId: row.run_id,
    stepKey: row.step_key,
    createdAt: Number(row.created_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  }
}
