import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { startMailbox, type Mail, type Mailbox } from '../support/mailbox.js'
import { accountWithGrants } from './collections-support.js'
import { activeFlow, executeToEnd, type Call } from './automate-support.js'

/**
 * The security review of send_email (issue 25, deliver item 5), as attacks over real HTTP against a real
 * SMTP server: someone who may only execute a flow (or post to its webhook) controls `$trigger.body`, and
 * the owner's flow templates recipients, the subject, the sender's name and the reply-to from it. What the
 * SMTP server receives is asserted: the envelope's recipients and the message's header lines.
 */
const BASE = '/api/v1/automate'
let server: TestServer
let mailbox: Mailbox
let owner: Account
/** May read and execute flows, nothing else: the attacker, who chooses $trigger.body. */
let executor: Account

const as =
  (account: Account): Call =>
  (method, path, body) =>
    server.request(method, path, { token: account.token, body })
const flowOf = (config: Record<string, unknown>) =>
  activeFlow(as(owner), `Mail ${randomBytes(3).toString('hex')}`, [
    { key: 'mail', type: 'send_email', config: { subject: 'Hello', text: 'Body', ...config } },
  ])
/** Runs the flow as the executor with `body` as $trigger.body; the finished run, read by the owner. */
const attack = (flowId: string, body: unknown) => executeToEnd(as(executor), as(owner), flowId, body)
const emailsToday = async () =>
  (await server.request('GET', `${BASE}/quotas`, { token: owner.token })).body.data.usage.emailsToday as number

/** The header section of a received message, one entry per header (continuation lines unfolded). */
function headersOf(mail: Mail): string[] {
  const head = mail.raw.split(/\r\n\r\n/)[0]!
  return head.split(/\r\n(?![ \t])/).map((h) => h.replace(/\r\n[ \t]/g, ' '))
}
const headerNames = (mail: Mail) => headersOf(mail).map((h) => h.slice(0, h.indexOf(':')).toLowerCase())

/** Runs each attack and expects it refused with `code` before anything reached the SMTP server or the quota. */
async function refusedBeforeSending(flowId: string, bodies: unknown[], code: string): Promise<void> {
  const received = mailbox.messages.length
  const used = await emailsToday()
  for (const body of bodies) {
    const run = await attack(flowId, body)
    expect(run.status, JSON.stringify(body)).toBe('failed')
    expect(run.error, JSON.stringify(body)).toMatchObject({ code, step: 'mail' })
  }
  expect(mailbox.messages.slice(received).map((m) => m.to)).toEqual([])
  expect(await emailsToday()).toBe(used)
}

beforeAll(async () => {
  mailbox = await startMailbox()
  server = await startServer({ SMTP_URL: mailbox.url, EMAIL_FROM: 'Plinth <flows@plinth.test>' })
  owner = await signUpOwner(server)
  executor = await accountWithGrants(server, owner.token, [
    { resource: 'system/automate', action: 'read' },
    { resource: 'system/automate', action: 'execute' },
  ])
  expect(
    (await server.request('PATCH', `${BASE}/quotas`, { token: owner.token, body: { maxEmailsPerDay: 1000 } })).status,
  ).toBe(200)
})
afterAll(async () => {
  await server?.stop()
  await mailbox?.close().catch(() => {})
})

describe('recipients from the trigger', () => {
  it('an address carrying a header, a second address, a display name or a group reaches nobody', async () => {
    const flowId = await flowOf({ to: '{{$trigger.body.to}}' })
    const smuggled = [
      'ada@example.test\r\nBcc: victim@evil.test',
      'ada@example.test\nBcc: victim@evil.test',
      'ada@example.test\rBcc: victim@evil.test',
      'ada@example.test\u2028Bcc: victim@evil.test',
      'ada@example.test, victim@evil.test',
      'ada@example.test; victim@evil.test',
      'ada@example.test victim@evil.test',
      'ada@example.test\tvictim@evil.test',
      '"ada@example.test" <victim@evil.test>',
      'Ada <victim@evil.test>',
      'ada@example.test <victim@evil.test>',
      '<victim@evil.test>',
      'victim@evil.test (ada@example.test)',
      'friends: victim@evil.test, ada@example.test;',
      'ada@example.test@evil.test',
      '"victim@evil.test"@example.test',
      `${'a'.repeat(250)}@example.test`,
    ]
    await refusedBeforeSending(
      flowId,
      smuggled.map((to) => ({ to })),
      'email_recipient_not_allowed',
    )
  })

  it('a list from the trigger is refused whole when one entry smuggles a recipient, is not an address, or makes it longer than 50', async () => {
    const flowId = await flowOf({ to: '{{$trigger.body.to}}' })
    const many = Array.from({ length: 51 }, (_, i) => `user${i}@example.test`)
    const bodies = [
      { to: ['ada@example.test', 'grace@example.test\r\nBcc: victim@evil.test'] },
      { to: ['ada@example.test', 'grace@example.test, victim@evil.test'] },
      { to: ['ada@example.test', ['victim@evil.test']] },
      { to: ['ada@example.test', { address: 'victim@evil.test' }] },
      { to: { address: 'victim@evil.test' } },
      { to: many },
    ]
    await refusedBeforeSending(flowId, bodies, 'email_recipient_not_allowed')
    // An entry of a written list smuggling a second one.
    await refusedBeforeSending(
      await flowOf({ to: ['ops@example.test', '{{$trigger.body.to}}'] }),
      [{ to: 'ada@example.test,victim@evil.test' }],
      'email_recipient_not_allowed',
    )
  })

  it('a plain address from the trigger is the one recipient the server is given', async () => {
    const flowId = await flowOf({ to: '{{$trigger.body.to}}' })
    const run = await attack(flowId, { to: 'ada@example.test' })
    expect(run.status, JSON.stringify(run)).toBe('completed')
    const mail = mailbox.messages[mailbox.messages.length - 1]!
    expect(mail.to).toEqual(['ada@example.test'])
    expect(headerNames(mail).filter((n) => ['to', 'cc', 'bcc'].includes(n))).toEqual(['to'])
  })
})

describe('the subject from the trigger', () => {
  it('line breaks of every kind stay inside the Subject header: one recipient, no header added', async () => {
    const flowId = await flowOf({ to: 'ada@example.test', subject: 'Order {{$trigger.body.id}}' })
    const breaks = ['\r\n', '\n', '\r', '\r\n\r\n', '\n\n', '\u2028', '\u2029', '\u0085', '\u000b', '\u000c']
    for (const lineBreak of breaks) {
      const received = mailbox.messages.length
      const id = `7${lineBreak}Bcc: victim@evil.test${lineBreak}X-Injected: yes`
      const run = await attack(flowId, { id })
      expect(run.status, `${JSON.stringify(lineBreak)}: ${JSON.stringify(run.error)}`).toBe('completed')
      expect(mailbox.messages).toHaveLength(received + 1)
      const mail = mailbox.messages[received]!
      expect(mail.to, JSON.stringify(lineBreak)).toEqual(['ada@example.test'])
      const names = headerNames(mail)
      expect(names, JSON.stringify(lineBreak)).not.toContain('bcc')
      expect(names, JSON.stringify(lineBreak)).not.toContain('x-injected')
      expect(
        names.filter((n) => n === 'subject'),
        JSON.stringify(lineBreak),
      ).toHaveLength(1)
      // And the body was not started early by an empty line.
      expect(mail.text.trim(), JSON.stringify(lineBreak)).toBe('Body')
    }
  })

  it('a very long subject is refused before sending; a long one within the limit is folded within the line limit', async () => {
    const flowId = await flowOf({ to: 'ada@example.test', subject: '{{$trigger.body.s}}' })
    await refusedBeforeSending(flowId, [{ s: 'x'.repeat(2000) }, { s: `${'word '.repeat(400)}` }], 'invalid_config')
    const received = mailbox.messages.length
    const run = await attack(flowId, { s: 'word '.repeat(190).trim() })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const mail = mailbox.messages[received]!
    for (const line of mail.raw.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998)
    expect(headerNames(mail).filter((n) => n === 'subject')).toHaveLength(1)
  })
})

describe('the sender and reply-to from the trigger', () => {
  it('a sender name or a reply-to cannot add a header, a recipient or a second sender', async () => {
    const fromFlow = await flowOf({ to: 'ada@example.test', from: '{{$trigger.body.name}} <flows@plinth.test>' })
    const names = [
      'Eve\r\nBcc: victim@evil.test',
      'Eve\nBcc: victim@evil.test',
      'Eve\rX-Injected: yes',
      '"Support" <ceo@plinth.test>, Eve',
      'ceo@plinth.test',
      'Eve <ceo@plinth.test>',
      'Eve; victim@evil.test',
      'Eve: victim@evil.test;',
      `${'E'.repeat(101)}`,
    ]
    await refusedBeforeSending(
      fromFlow,
      names.map((name) => ({ name })),
      'email_recipient_not_allowed',
    )
    const replyFlow = await flowOf({ to: 'ada@example.test', replyTo: '{{$trigger.body.reply}}' })
    const replies = [
      'ada@example.test\r\nBcc: victim@evil.test',
      'ada@example.test, victim@evil.test',
      'Eve <eve@evil.test>',
      'eve@evil.test\nX-Injected: yes',
    ]
    await refusedBeforeSending(
      replyFlow,
      replies.map((reply) => ({ reply })),
      'email_recipient_not_allowed',
    )

    // A plain name is a name: the envelope sender stays the flow's, and nobody is added.
    const received = mailbox.messages.length
    const run = await attack(fromFlow, { name: 'Ada Lovelace' })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const mail = mailbox.messages[received]!
    expect(mail.from).toBe('flows@plinth.test')
    expect(mail.to).toEqual(['ada@example.test'])
    expect(headersOf(mail)).toContain('From: Ada Lovelace <flows@plinth.test>')
    expect(headerNames(mail)).not.toContain('bcc')
  })
})
