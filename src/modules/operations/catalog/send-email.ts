import { z } from 'zod'
import { checkTemplate, renderTemplateText } from '../../../lib/template/index.js'
import { isEmailError } from '../../email/index.js'
import { isRecord } from '../config-paths.js'
import { emailServicesOf } from '../email-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError, type OperationContext } from '../types.js'

/** The longest body send_email sends (characters). */
export const maxBodyLength = 1_000_000

// An opening or closing tag, a comment or a doctype: what makes rendered output HTML.
const htmlTag = /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>|<!--|<!doctype/i

/** Whether rendered output holds HTML tags (the spec's rule for sending `template` as HTML). */
export function holdsHtml(value: string): boolean {
  return htmlTag.test(value)
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
function escapeDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/[&<>"']/g, (c) => escapes[c]!)
  if (Array.isArray(value)) return value.map(escapeDeep)
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeDeep(v)]))
  return value
}

/**
 * Renders `template` over `templateData` (`{{key}}`, dot paths): HTML when the rendered output holds tags,
 * else text. In a template that is itself HTML, the data's text is HTML-escaped, so a value cannot add
 * markup (decision 037). Placeholders that find nothing give "" and are written to the step log.
 */
export function renderBody(
  template: string,
  data: Record<string, unknown>,
  ctx: Pick<OperationContext, 'log'>,
): { html?: string; text?: string } {
  const source = holdsHtml(template)
  const { text: rendered, unresolved } = renderTemplateText(template, source ? escapeDeep(data) : data, {
    maxLength: maxBodyLength,
  })
  for (const miss of unresolved)
    ctx.log({ level: 'warn', message: `template: ${miss.tag} gave the empty value (${miss.reason}): ${miss.message}` })
  return holdsHtml(rendered) ? { html: rendered } : { text: rendered }
}

const recipients = z
  .union([z.array(text(1_000, 1)).min(1).max(1_000), text(1_000, 1)])
  .describe('One address, or a list of addresses (a template; each recipient counts once against the daily quota)')

/**
 * Sends one email to every recipient through the configured channel (SMTP or the JSON REST provider), or
 * to none: the typed refusals (email_no_channel, email_recipient_not_allowed, email_no_capacity,
 * email_quota_exceeded) all come before the transport is touched; the transport's own answers become
 * email_upstream_quota_exceeded or email_send_failed. Output { messageId, status: 'sent', to, channel,
 * quotaRemaining }. Each recipient is a row of the message delivery log (never the body).
 */
export const sendEmail = defineOperation({
  type: 'send_email',
  category: 'communication',
  label: 'Send email',
  description:
    'Sends an email (to one address or a list) through the configured channel; every quota and recipient check comes before anything is sent; output { messageId, status, to, channel, quotaRemaining }.',
  effects: 'writes',
  rawPaths: ['template'],
  configSchema: z
    .strictObject({
      to: recipients,
      subject: text(998, 1).describe('The subject (a template; one line)'),
      html: text(maxBodyLength).optional().describe('An HTML body (a template)'),
      text: text(maxBodyLength).optional().describe('A text body (a template)'),
      from: text(320).optional().describe('The sender instead of the configured one: an address, or Name <address>'),
      replyTo: text(254).optional().describe('The address replies go to'),
      template: z
        .string()
        .max(maxBodyLength)
        .refine((value) => checkTemplate(value) === null, 'does not parse as a template')
        .optional()
        .describe(
          'The body with {{key}} placeholders over templateData (dot paths); sent as HTML when the rendered output holds tags, else as text. It takes the place of html or text',
        ),
      templateData: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("The values of the template's placeholders (templates resolved)"),
    })
    .refine((config) => config.template !== undefined || config.html !== undefined || config.text !== undefined, {
      message: 'Give a template, html or text',
      path: ['text'],
    }),
  example: {
    to: '{{$trigger.body.email}}',
    subject: 'Welcome, {{$trigger.body.name}}',
    template: '<p>Hello {{name}}, your order {{order.id}} is on its way.</p>',
    templateData: { name: '{{$trigger.body.name}}', order: { id: '{{$trigger.body.orderId}}' } },
  },
  async run(config, ctx) {
    const { email, quotas } = emailServicesOf(ctx)
    const body = config.template !== undefined ? renderBody(config.template, config.templateData ?? {}, ctx) : {}
    const html = body.html ?? config.html
    const textBody = body.text ?? config.text
    const limits = await quotas.limits(ctx.run.projectId)
    try {
      return await email.send(
        ctx.principal,
        {
          to: config.to,
          subject: config.subject,
          ...(html !== undefined ? { html } : {}),
          ...(textBody !== undefined ? { text: textBody } : {}),
          ...(config.from !== undefined ? { from: config.from } : {}),
          ...(config.replyTo !== undefined ? { replyTo: config.replyTo } : {}),
        },
        { dailyLimit: limits.maxEmailsPerDay, flowId: ctx.run.flowId, runId: ctx.run.id, stepKey: ctx.step.key },
      )
    } catch (err) {
      if (isEmailError(err)) throw new StepError(err.code, err.message, err.details, err.status, err.retryable)
      throw err
    }
  },
})
