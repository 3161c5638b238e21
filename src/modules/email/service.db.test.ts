import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { dialects, openFixture, type DialectFixture } from '../../../test/support/dialects.js'
import { createManualClock, type ManualClock } from '../../lib/clock-manual.js'
import { AppError } from '../../lib/errors.js'
import { createLogger } from '../../lib/log.js'
import { createMailer, type EmailChannel, type MailMessage } from '../../lib/mail/index.js'
import { principals } from '../../lib/principal.js'
import { m0017Email } from '../../migrations/system/0017-email.js'
import { EmailError } from './errors.js'
import { receiptSignature } from './receipts.js'
import { createEmailService, type OutgoingEmail } from './service.js'

// The email service on each dialect with a fake transport: every refusal before the transport, the quota
// reserved per recipient, the transport's answers mapped, the cool-off, receipts.

const actor = principals.system('p1', 'test')
const secret = 'receipt-secret-0123456789'

describe.each(dialects())('email service on %s', (kind) => {
  let fixture: DialectFixture
  let clock: ManualClock
  let sent: MailMessage[]
  let answer: () => Promise<{ messageId: string; accepted: boolean }>
  const make = (channel: EmailChannel = 'email_binding', receiptSecret: string | null = secret) =>
    createEmailService({
      systemDb: fixture.db,
      clock,
      log: createLogger('silent'),
      receiptSecret,
      coolOffMs: 60_000,
      access: { authorize: async () => {} },
      mailer: { channel, send: async (m) => (sent.push(m), answer()) },
    })
  async function refusal(promise: Promise<unknown>): Promise<EmailError> {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(EmailError)
    return err as EmailError
  }
  const message = (to: OutgoingEmail['to']): OutgoingEmail => ({ to, subject: 'Hi', text: 'Body' })
  const failWith = (status: number | null) => () => Promise.reject(new AppError('service_unavailable', 'x', { status }))

  beforeEach(async () => {
    fixture = await openFixture(kind)
    await fixture.db.schema
      .createTable('projects')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .execute()
    await fixture.db.insertInto('projects').values({ id: 'p1' }).execute()
    await m0017Email.up(fixture.db, kind)
    clock = createManualClock(Date.UTC(2026, 10, 26, 12))
    sent = []
    let n = 0
    answer = async () => ({ messageId: `<m${++n}@test>`, accepted: true })
  })
  afterEach(async () => {
    await fixture.close()
  })

  it('without a channel: email_no_channel, nothing offered to a transport', async () => {
    const err = await refusal(make('email_no_channel').send(actor, message('a@x.test'), { dailyLimit: 10 }))
    expect(err).toMatchObject({ code: 'email_no_channel', retryable: false })
    expect(sent).toHaveLength(0)
  })

  it.each([
    ['a list in a string', { to: 'a@x.test, eve@evil.test' }],
    ['a display name', { to: 'Ada <a@x.test>' }],
    ['a header injection', { to: 'a@x.test\r\nBcc: eve@evil.test' }],
    ['a bad one in a list', { to: ['a@x.test', 'not an address'] }],
    ['an empty list', { to: [] }],
    ['51 recipients', { to: Array.from({ length: 51 }, (_, i) => `u${i}@x.test`) }],
    ['a sender list', { to: 'a@x.test', from: 'a@x.test, eve@evil.test' }],
    ['a reply-to with a name', { to: 'a@x.test', replyTo: 'Eve <eve@evil.test>' }],
  ])('%s is email_recipient_not_allowed and sends nothing, counts nothing', async (_name, change) => {
    const service = make()
    const err = await refusal(service.send(actor, { ...message('a@x.test'), ...change }, { dailyLimit: 100 }))
    expect(err).toMatchObject({ code: 'email_recipient_not_allowed', retryable: false })
    expect(sent).toHaveLength(0)
    expect(await service.usage('p1')).toEqual({ emailsToday: 0 })
  })

  it('counts each distinct recipient; a send over the quota sends nothing and says limit, used, requested, remaining', async () => {
    const service = make()
    const first = await service.send(actor, message(['a@x.test', 'A@X.test', 'b@x.test']), {
      dailyLimit: 4,
      runId: 'r1',
      flowId: 'f1',
      stepKey: 'mail',
    })
    expect(first).toMatchObject({
      status: 'sent',
      channel: 'email_binding',
      quotaRemaining: 2,
      to: ['a@x.test', 'A@X.test', 'b@x.test'],
    })
    expect(sent[0]!.to).toEqual(['a@x.test', 'b@x.test'])
    const err = await refusal(service.send(actor, message(['c@x.test', 'd@x.test', 'e@x.test']), { dailyLimit: 4 }))
    expect(err).toMatchObject({
      code: 'email_quota_exceeded',
      retryable: false,
      details: { limit: 4, used: 2, requested: 3, remaining: 2 },
    })
    expect(sent).toHaveLength(1)
    expect(await service.usage('p1')).toEqual({ emailsToday: 2 })
    // A new UTC day starts from nothing.
    await clock.advance(24 * 3600_000)
    expect(await service.usage('p1')).toEqual({ emailsToday: 0 })
  })

  it('two sends racing for the last place: one is sent, the other refused', async () => {
    const service = make()
    const results = await Promise.allSettled([
      service.send(actor, message('a@x.test'), { dailyLimit: 1 }),
      service.send(actor, message('b@x.test'), { dailyLimit: 1 }),
    ])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(sent).toHaveLength(1)
    expect(await service.usage('p1')).toEqual({ emailsToday: 1 })
  })

  it.each([
    ['SMTP 421', 'email_binding', 421, 'email_upstream_quota_exceeded', 429, true],
    ['SMTP 452', 'email_binding', 452, 'email_upstream_quota_exceeded', 429, true],
    ['SMTP 454', 'email_binding', 454, 'email_upstream_quota_exceeded', 429, true],
    ['REST 429', 'rest_api', 429, 'email_upstream_quota_exceeded', 429, true],
    ['SMTP 550', 'email_binding', 550, 'email_send_failed', 422, false],
    ['SMTP 451', 'email_binding', 451, 'email_send_failed', 503, true],
    ['REST 400', 'rest_api', 400, 'email_send_failed', 400, false],
    ['REST 502', 'rest_api', 502, 'email_send_failed', 502, true],
    ['no answer', 'email_binding', null, 'email_send_failed', 503, true],
  ] as const)(
    '%s is %s (status %i, retryable %s) and gives the quota back',
    async (_name, channel, reply, code, status, retryable) => {
      const service = make(channel)
      answer = failWith(reply)
      const err = await refusal(service.send(actor, message('a@x.test'), { dailyLimit: 5 }))
      expect(err).toMatchObject({ code, status, retryable, details: { channel, reply } })
      expect(await service.usage('p1')).toEqual({ emailsToday: 0 })
      expect((await service.list(actor, { page: 1, limit: 10 })).total).toBe(0)
    },
  )

  it("after the provider's limit the channel rests: email_no_capacity without touching the transport, then sends again", async () => {
    const service = make('rest_api')
    answer = failWith(429)
    await refusal(service.send(actor, message('a@x.test'), { dailyLimit: 5 }))
    answer = async () => ({ messageId: 'ok-1', accepted: true })
    const err = await refusal(service.send(actor, message('a@x.test'), { dailyLimit: 5 }))
    expect(err).toMatchObject({ code: 'email_no_capacity', retryable: true, details: { retryAfterMs: 60_000 } })
    expect(sent).toHaveLength(1)
    await clock.advance(60_000)
    expect(await service.send(actor, message('a@x.test'), { dailyLimit: 5 })).toMatchObject({
      messageId: 'ok-1',
      channel: 'rest_api',
    })
  })

  it('through the real rest_api channel: a provider answering 429 is upstream quota, and the next send never reaches it', async () => {
    let hits = 0
    const provider = createServer((_req, res) => void (hits++, res.writeHead(429).end()))
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
    try {
      const apiUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/send`
      const mailer = createMailer({ channel: 'rest_api', from: 'x@y.test', smtpUrl: null, apiUrl, apiKey: 'k' })
      const service = createEmailService({
        systemDb: fixture.db,
        clock,
        log: createLogger('silent'),
        receiptSecret: null,
        access: { authorize: async () => {} },
        mailer,
      })
      expect(await refusal(service.send(actor, message(['a@x.test', 'b@x.test']), { dailyLimit: 5 }))).toMatchObject({
        code: 'email_upstream_quota_exceeded',
        retryable: true,
        details: { channel: 'rest_api', reply: 429 },
      })
      expect(await refusal(service.send(actor, message('a@x.test'), { dailyLimit: 5 }))).toMatchObject({
        code: 'email_no_capacity',
      })
      expect(hits).toBe(1)
      expect(await service.usage('p1')).toEqual({ emailsToday: 0 })
    } finally {
      provider.closeAllConnections()
      await new Promise<void>((resolve) => provider.close(() => resolve()))
    }
  })

  it('through the real SMTP channel: a 452 reply is upstream quota; a 550 is email_send_failed, not retryable; nothing is counted', async () => {
    let received = 0
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.endsWith('@busy.test'))
          return callback(Object.assign(new Error('Too many recipients today'), { responseCode: 452 }))
        if (address.address.endsWith('@gone.test'))
          return callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }))
        callback()
      },
      onData(stream, _session, callback) {
        stream.on('data', () => {})
        stream.on('end', () => void (received++, callback()))
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve))
    try {
      const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`
      const mailer = createMailer({ channel: 'email_binding', from: 'x@y.test', smtpUrl, apiUrl: null, apiKey: null })
      const service = createEmailService({
        systemDb: fixture.db,
        clock,
        log: createLogger('silent'),
        receiptSecret: null,
        access: { authorize: async () => {} },
        mailer,
      })
      expect(await refusal(service.send(actor, message('a@gone.test'), { dailyLimit: 5 }))).toMatchObject({
        code: 'email_send_failed',
        status: 422,
        retryable: false,
        details: { reply: 550 },
      })
      expect(await refusal(service.send(actor, message('a@busy.test'), { dailyLimit: 5 }))).toMatchObject({
        code: 'email_upstream_quota_exceeded',
        details: { channel: 'email_binding', reply: 452 },
      })
      expect(received).toBe(0)
      expect(await service.usage('p1')).toEqual({ emailsToday: 0 })
      await mailer.close()
    } finally {
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    }
  })

  it('logs one row per recipient with no subject or body; a genuine receipt marks one delivered, a bad one nothing', async () => {
    const service = make()
    const { messageId } = await service.send(
      actor,
      { to: ['a@x.test', 'b@x.test'], subject: 'Secret subject', html: '<p>Secret body</p>' },
      { dailyLimit: 5, flowId: 'f1', runId: 'r1', stepKey: 'mail' },
    )
    expect(sent[0]).toMatchObject({ text: 'Secret body', html: '<p>Secret body</p>' })
    const rows = await fixture.db.selectFrom('email_messages').selectAll().execute()
    expect(rows).toHaveLength(2)
    expect(JSON.stringify(rows)).not.toMatch(/Secret/)
    const body = JSON.stringify([
      { messageId, recipient: 'b@x.test', status: 'delivered' },
      { messageId, status: 'bounced' },
    ])
    const ts = String(clock.seconds())
    await expect(
      service.receipt(body, ts, receiptSignature('wrong-secret-0123456789', ts, body)),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    const old = String(clock.seconds() - 301)
    await expect(service.receipt(body, old, receiptSignature(secret, old, body))).rejects.toMatchObject({
      code: 'unauthorized',
    })
    await expect(
      make('email_binding', null).receipt(body, ts, receiptSignature(secret, ts, body)),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    expect((await service.list(actor, { page: 1, limit: 10, status: 'delivered' })).total).toBe(0)
    expect(await service.receipt(body, ts, receiptSignature(secret, ts, body))).toEqual({ updated: 1, ignored: 1 })
    const log = await service.list(actor, { page: 1, limit: 10 })
    expect(log.data.map((r) => [r.recipient, r.status])).toEqual(
      expect.arrayContaining([
        ['a@x.test', 'sent'],
        ['b@x.test', 'delivered'],
      ]),
    )
    expect(log.data[0]).toMatchObject({
      messageId,
      flowId: 'f1',
      runId: 'r1',
      stepKey: 'mail',
      channel: 'email_binding',
    })
    // Another project's caller sees none of it.
    expect((await service.list(principals.system('p2', 'test'), { page: 1, limit: 10 })).total).toBe(0)
  })
})
