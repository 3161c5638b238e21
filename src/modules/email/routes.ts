import { AppError } from '../../lib/errors.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  z,
  type Security,
} from '../../lib/http/index.js'
import { receiptSignatureHeader, receiptTimestampHeader } from './receipts.js'
import { LoggedMessageSchema, LogQuerySchema, ReceiptResultSchema } from './schemas.js'
import type { EmailService } from './service.js'

const tags = ['Email']
// A receipt is small; a larger body is refused before it is hashed.
const maxReceiptBytes = 256 * 1024

const listLog = defineRoute({
  method: 'get',
  path: '/api/v1/automate/email-log',
  operationId: 'emailLog.list',
  tags,
  summary: 'The message delivery log: one row per recipient, sent or delivered, newest first (never a subject or body)',
  permission: 'system/automate:read',
  request: { query: LogQuerySchema },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(LoggedMessageSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
      }),
      'A page of the log',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

const postReceipt = defineRoute({
  method: 'post',
  path: '/api/v1/email/receipts',
  operationId: 'emailReceipts.create',
  tags,
  summary: `A provider's delivery receipt, signed: ${receiptTimestampHeader} (Unix seconds, within 5 minutes) and ${receiptSignatureHeader} (sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>" under EMAIL_RECEIPT_SECRET>); body { messageId, recipient?, status } or a list of up to 100`,
  permission: null,
  responses: {
    200: jsonContent(z.object({ data: ReceiptResultSchema }), 'What the receipts changed'),
    ...errorResponses('invalid_request', 'unauthorized', 'payload_too_large'),
  },
})

/** GET /api/v1/automate/email-log (system/automate:read) and the public, signed POST /api/v1/email/receipts. */
export function emailRoutes(email: EmailService, security: Security) {
  const router = createRouter(security)
  router.openapi(listLog, async (c) => {
    const {
      page,
      limit,
      status,
      recipient,
      flow_id: flowId,
      run_id: runId,
      message_id: messageId,
    } = c.req.valid('query')
    const query = { page, limit, status, recipient: recipient?.toLowerCase(), flowId, runId, messageId }
    const { data, total } = await email.list(principalOf(c), query)
    return c.json({ data, total, page, limit, hasMore: page * limit < total }, 200)
  })
  router.openapi(postReceipt, async (c) => {
    const raw = await c.req.text()
    if (Buffer.byteLength(raw) > maxReceiptBytes)
      throw new AppError('payload_too_large', `A receipt body is at most ${maxReceiptBytes} bytes`)
    const result = await email.receipt(raw, c.req.header(receiptTimestampHeader), c.req.header(receiptSignatureHeader))
    return c.json({ data: result }, 200)
  })
  return router
}
