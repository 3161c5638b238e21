import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMailbox, type Mailbox } from '../support/mailbox.js'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, executeToEnd } from './automate-support.js'

/**
 * send_email inside real flow runs against a real SMTP server (smtp-server) started here (issue 17, item 1):
 * the quota is reserved for every recipient before anything is sent (a 3-recipient send with 2 left sends
 * nothing and says limit, used, requested, remaining), an SMTP outage is email_send_failed, the message
 * delivery log holds one row per recipient and never a subject or body, and a signed receipt turns sent into
 * delivered while a badly signed one changes nothing.
 */
const BASE = '/api/v1/automate'
const RECEIPT_SECRET = `rcpt-${randomBytes(12).toString('hex')}`
const SUBJECT = `Order shipped ${randomBytes(4).toString('hex')}`
const SECRET_WORDS = `body-${randomBytes(6).toString('hex')}`

let server: TestServer
let mailbox: Mailbox
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })

const flowOf = (operations: unknown[]) => activeFlow(call, `Email ${randomBytes(3).toString('hex')}`, operations)
const runOf = (flowId: string, body: unknown) => executeToEnd(call, call, flowId, body)
const sendStep = (to: unknown) => ({
  key: 'mail',
  type: 'send_email',
  config: {
    to,
    subject: SUBJECT,
    template: '<p>Hello {{name}}, {{order.note}}</p>',
    templateData: { name: '{{$trigger.body.name}}', order: { note: SECRET_WORDS } },
  },
})
const emailsToday = async () => (await call('GET', `${BASE}/quotas`)).body.data.usage.emailsToday as number
const logRows = () => server.app.registry.system.db.selectFrom('email_messages').selectAll().execute()
function signed(body: string, secret = RECEIPT_SECRET, at = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(at)
  return {
    'content-type': 'application/json',
    'X-Email-Timestamp': ts,
    'X-Email-Signature': `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`,
  }
}

beforeAll(async () => {
  mailbox = await startMailbox()
  server = await startServer({
    SMTP_URL: mailbox.url,
    EMAIL_FROM: 'Plinth <flows@plinth.test>',
    EMAIL_RECEIPT_SECRET: RECEIPT_SECRET,
  })
  owner = await signUpOwner(server)
  expect((await call('PATCH', `${BASE}/quotas`, { maxEmailsPerDay: 5 })).status).toBe(200)
})
afterAll(async () => {
  await server?.stop()
  await mailbox?.close().catch(() => {})
})

describe('send_email over a real SMTP server', () => {
  let firstMessageId = ''

  it('GET /health reports the channel and receipts, and no secret', async () => {
    const health = await server.request('GET', '/health')
    expect(health.body.email_capabilities).toEqual({
      arbitraryRecipients: true,
      channel: 'email_binding',
      deliveryReceipts: true,
    })
    expect(health.text).not.toContain(RECEIPT_SECRET)
    expect(health.text).not.toContain(mailbox.url)
  })

  it('sends the rendered HTML template; the output, the log (one row, sent) and emailsToday agree', async () => {
    const flowId = await flowOf([sendStep('{{$trigger.body.email}}')])
    const run = await runOf(flowId, { email: 'Ada@Example.test', name: '<b>Ada</b>' })
    expect(run.status, JSON.stringify(run)).toBe('completed')
    const output = run.stepLogs[0].output
    expect(output).toMatchObject({
      status: 'sent',
      to: 'Ada@Example.test',
      channel: 'email_binding',
      quotaRemaining: 4,
    })
    expect(output.messageId).toMatch(/^<.+@.+>$/)
    firstMessageId = output.messageId
    expect(mailbox.messages).toHaveLength(1)
    const mail = mailbox.messages[0]!
    expect(mail.to).toEqual(['Ada@example.test'])
    expect(mail.subject).toBe(SUBJECT)
    // An HTML template: the value's markup is escaped, so data cannot add tags.
    expect(mail.raw).toContain('&lt;b&gt;Ada&lt;/b&gt;')
    expect(mail.raw).toMatch(/Content-Type: text\/html/)
    expect(await emailsToday()).toBe(1)
    const log = await call('GET', `${BASE}/email-log`)
    expect(log.status, log.text).toBe(200)
    expect(log.body).toMatchObject({
      total: 1,
      data: [
        {
          messageId: firstMessageId,
          recipient: 'ada@example.test',
          channel: 'email_binding',
          status: 'sent',
          flowId,
          runId: run.runId,
          stepKey: 'mail',
          deliveredAt: null,
        },
      ],
    })
  })

  it('a list in a string from the trigger is email_recipient_not_allowed and reaches nobody', async () => {
    const flowId = await flowOf([sendStep('{{$trigger.body.email}}')])
    const run = await runOf(flowId, { email: 'ada@example.test, eve@evil.test', name: 'x' })
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'email_recipient_not_allowed', step: 'mail' })
    expect(mailbox.messages).toHaveLength(1)
    expect(await emailsToday()).toBe(1)
  })

  it('a 3-recipient send with 2 left sends nothing and answers email_quota_exceeded with limit, used, requested, remaining', async () => {
    const two = await runOf(await flowOf([sendStep(['grace@example.test', 'linus@example.test'])]), { name: 'Grace' })
    expect(two.status, JSON.stringify(two)).toBe('completed')
    expect(two.stepLogs[0].output).toMatchObject({
      to: ['grace@example.test', 'linus@example.test'],
      quotaRemaining: 2,
    })
    expect(mailbox.messages).toHaveLength(2)
    expect(mailbox.messages[1]!.to).toEqual(['grace@example.test', 'linus@example.test'])
    expect(await emailsToday()).toBe(3)

    const received = mailbox.messages.length
    const three = await runOf(await flowOf([sendStep(['a@example.test', 'b@example.test', 'c@example.test'])]), {
      name: 'Many',
    })
    expect(three.status).toBe('failed')
    expect(three.error).toMatchObject({ code: 'email_quota_exceeded', step: 'mail' })
    expect(three.stepLogs[0].error).toMatchObject({
      code: 'email_quota_exceeded',
      details: { limit: 5, used: 3, requested: 3, remaining: 2 },
    })
    expect(mailbox.messages).toHaveLength(received)
    expect(await emailsToday()).toBe(3)
    expect((await logRows()).map((r) => r.recipient).sort()).toEqual([
      'ada@example.test',
      'grace@example.test',
      'linus@example.test',
    ])
  })

  it('the log table holds no subject and no body, and the log route shows none', async () => {
    const rows = await logRows()
    expect(rows).toHaveLength(3)
    const stored = JSON.stringify(rows)
    for (const content of [SUBJECT, SECRET_WORDS, 'Hello', 'Grace']) expect(stored).not.toContain(content)
    const listed = (await call('GET', `${BASE}/email-log?limit=100`)).text
    for (const content of [SUBJECT, SECRET_WORDS, 'Hello']) expect(listed).not.toContain(content)
  })

  it('an unsigned, badly signed or stale receipt is 401 and changes nothing', async () => {
    const body = JSON.stringify({ messageId: firstMessageId, status: 'delivered' })
    const attempts: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      signed(body, 'not-the-secret-at-all'),
      signed(body, RECEIPT_SECRET, Math.floor(Date.now() / 1000) - 3600),
      {
        ...signed(body),
        'X-Email-Signature': signed(JSON.stringify({ messageId: 'other', status: 'delivered' }))['X-Email-Signature']!,
      },
    ]
    for (const headers of attempts) {
      const reply = await server.request('POST', '/api/v1/email/receipts', { rawBody: body, headers })
      expect(reply.status, reply.text).toBe(401)
      expect(reply.body.error).toBe('unauthorized')
    }
    expect((await logRows()).every((r) => r.status === 'sent')).toBe(true)
  })

  it('a signed receipt turns sent into delivered', async () => {
    const body = JSON.stringify({ messageId: firstMessageId, recipient: 'ADA@example.test', status: 'delivered' })
    const reply = await server.request('POST', '/api/v1/email/receipts', { rawBody: body, headers: signed(body) })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({ updated: 1, ignored: 0 })
    const delivered = await call('GET', `${BASE}/email-log?status=delivered`)
    expect(delivered.body.total).toBe(1)
    expect(delivered.body.data[0]).toMatchObject({
      messageId: firstMessageId,
      recipient: 'ada@example.test',
      status: 'delivered',
    })
    expect(typeof delivered.body.data[0].deliveredAt).toBe('number')
    expect((await call('GET', `${BASE}/email-log?status=sent`)).body.total).toBe(2)
  })

  it('with the SMTP server stopped, the step fails with email_send_failed (retryable) and the quota is given back', async () => {
    const flowId = await flowOf([sendStep('ada@example.test')])
    await mailbox.close()
    const run = await runOf(flowId, { name: 'Ada' })
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'email_send_failed', step: 'mail', statusCode: 503 })
    expect(run.stepLogs[0].error).toMatchObject({
      code: 'email_send_failed',
      details: { channel: 'email_binding', reply: null },
    })
    expect(await emailsToday()).toBe(3)
    expect(await logRows()).toHaveLength(3)
    expect(server.logs.join('\n')).not.toContain(RECEIPT_SECRET)
  })
})
