import { queryInteger, z } from '../../lib/http/index.js'

/** The wire shapes of the email routes; they feed validation and the OpenAPI document. */

export const LoggedMessageSchema = z
  .object({
    id: z.string(),
    messageId: z
      .string()
      .openapi({ description: "The provider's id (SMTP Message-ID, or the REST provider's id): what a receipt names" }),
    recipient: z.string().openapi({ description: 'One recipient, lower-case' }),
    channel: z.enum(['email_binding', 'rest_api']),
    status: z
      .enum(['sent', 'delivered'])
      .openapi({ description: 'sent: the provider accepted it; delivered: a signed receipt confirmed it' }),
    flowId: z.string().nullable(),
    runId: z.string().nullable(),
    stepKey: z.string().nullable(),
    createdAt: z.number().int().openapi({ description: 'Milliseconds since the epoch' }),
    deliveredAt: z.number().int().nullable().openapi({ description: 'Milliseconds since the epoch' }),
  })
  .openapi('EmailLogEntry', { description: 'One recipient of one message send_email sent: never its subject or body' })

export const LogQuerySchema = z.object({
  page: queryInteger({ min: 1, default: 1 }),
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(['sent', 'delivered']).optional(),
  recipient: z.string().min(3).max(254).optional().openapi({ description: 'One recipient (any case)' }),
  flow_id: z.string().min(1).max(64).optional(),
  run_id: z.string().min(1).max(64).optional(),
  message_id: z.string().min(1).max(998).optional(),
})

export const ReceiptResultSchema = z
  .object({
    updated: z.number().int().openapi({ description: 'Log rows turned from sent into delivered' }),
    ignored: z.number().int().openapi({ description: 'Receipts with a status other than delivered' }),
  })
  .openapi('EmailReceiptResult')
