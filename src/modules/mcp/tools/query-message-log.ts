import { z } from 'zod'
import { defineTool } from '../types.js'

/** query_message_log: the message delivery log (send_email), newest first; never a subject or a body. */
export const queryMessageLog = defineTool({
  name: 'query_message_log',
  description:
    'Search the message delivery log (emails flows sent) and outcomes, newest first: { messages: [{ id, messageId, recipient, channel, status, flowId, runId, stepKey, createdAt, deliveredAt }], total }. Message subjects and bodies are never returned. Needs system/automate:read.',
  inputSchema: z
    .object({
      status: z
        .enum(['sent', 'delivered'])
        .optional()
        .describe('sent: the provider accepted it; delivered: a receipt confirmed it'),
      to: z.string().min(3).max(254).optional().describe('One recipient address (any case)'),
      since: z
        .union([z.iso.datetime({ offset: true }), z.number().int().min(0)])
        .optional()
        .describe('Only messages logged at or after this time (ISO 8601, or milliseconds since the epoch)'),
      limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 25, max 100)'),
    })
    .strict(),
  async run(principal, args, services) {
    const since =
      args.since === undefined ? undefined : typeof args.since === 'number' ? args.since : Date.parse(args.since)
    const { data, total } = await services.email.list(principal, {
      page: 1,
      limit: args.limit ?? 25,
      status: args.status,
      recipient: args.to?.toLowerCase(),
      since,
    })
    return { messages: data, total }
  },
})
