import { describe, expect, it } from 'vitest'
import { EmailError, type OutgoingEmail, type SendContext } from '../../email/index.js'
import { testContext, type TestServices } from '../test-context.js'
import { StepError } from '../types.js'
import { holdsHtml, sendEmail } from './send-email.js'

// send_email with fake services: the template rule, what reaches the email service, typed failures.

function fakeServices(fail?: EmailError) {
  const calls: { message: OutgoingEmail; context: SendContext }[] = []
  return {
    calls,
    services: {
      quotas: { limits: async () => ({ maxEmailsPerDay: 7 }) },
      email: {
        send: async (_actor: unknown, message: OutgoingEmail, context: SendContext) => {
          calls.push({ message, context })
          if (fail) throw fail
          return {
            messageId: 'm1',
            status: 'sent' as const,
            to: message.to,
            channel: 'email_binding' as const,
            quotaRemaining: 6,
          }
        },
      },
    },
  }
}
const run = async (config: Record<string, unknown>, services: TestServices) => {
  const { ctx, lines } = testContext({}, { services, key: 'mail' })
  const output = await sendEmail.run(sendEmail.configSchema.parse(config), ctx)
  return { output, lines }
}

describe('send_email', () => {
  it.each([
    ['<p>Hi</p>', true],
    ['Hi <br/> there', true],
    ['<!-- note -->', true],
    ['2 < 3 and 4 > 1', false],
    ['a <not a tag', false],
    ['plain text', false],
  ])('holdsHtml(%j) is %s', (value, expected) => {
    expect(holdsHtml(value)).toBe(expected)
  })

  it('renders {{key}} dot paths over templateData: text without tags, with the quota and run ids passed on', async () => {
    const { calls, services } = fakeServices()
    const { output, lines } = await run(
      {
        to: 'a@x.test',
        subject: 'S',
        template: 'Hello {{user.name}}, item {{items[0]}} {{missing}}',
        templateData: { user: { name: 'Ada' }, items: ['x1'] },
      },
      services,
    )
    expect(output).toEqual({
      messageId: 'm1',
      status: 'sent',
      to: 'a@x.test',
      channel: 'email_binding',
      quotaRemaining: 6,
    })
    expect(calls[0]!.message).toEqual({ to: 'a@x.test', subject: 'S', text: 'Hello Ada, item x1 ' })
    expect(calls[0]!.context).toEqual({ dailyLimit: 7, flowId: 'flow-1', runId: 'run-1', stepKey: 'mail' })
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('{{missing}}') })])
  })

  it('an HTML template is sent as HTML with the data escaped; plain text that a value makes HTML is HTML too', async () => {
    const { calls, services } = fakeServices()
    await run(
      {
        to: ['a@x.test', 'b@x.test'],
        subject: 'S',
        template: '<p>{{name}}</p>',
        templateData: { name: '<script>x</script> & co' },
      },
      services,
    )
    expect(calls[0]!.message).toEqual({
      to: ['a@x.test', 'b@x.test'],
      subject: 'S',
      html: '<p>&lt;script&gt;x&lt;/script&gt; &amp; co</p>',
    })
    await run(
      {
        to: 'a@x.test',
        subject: 'S',
        template: '{{report}}',
        templateData: { report: '<table><tr><td>1</td></tr></table>' },
        text: 'fallback',
      },
      services,
    )
    expect(calls[1]!.message).toEqual({
      to: 'a@x.test',
      subject: 'S',
      html: '<table><tr><td>1</td></tr></table>',
      text: 'fallback',
    })
  })

  it('html, text, from and replyTo are passed as given', async () => {
    const { calls, services } = fakeServices()
    await run(
      { to: 'a@x.test', subject: 'S', html: '<b>h</b>', text: 't', from: 'Ops <ops@x.test>', replyTo: 'r@x.test' },
      services,
    )
    expect(calls[0]!.message).toEqual({
      to: 'a@x.test',
      subject: 'S',
      html: '<b>h</b>',
      text: 't',
      from: 'Ops <ops@x.test>',
      replyTo: 'r@x.test',
    })
  })

  it('refuses a config without template, html or text, and a template that does not parse', () => {
    expect(sendEmail.configSchema.safeParse({ to: 'a@x.test', subject: 'S' }).success).toBe(false)
    expect(sendEmail.configSchema.safeParse({ to: 'a@x.test', subject: 'S', template: 'Hi {{name' }).success).toBe(
      false,
    )
  })

  it("the email service's refusal is a step error with its code, details, status and retryability", async () => {
    const { services } = fakeServices(
      new EmailError('email_quota_exceeded', 'over', { limit: 5, used: 3, requested: 3, remaining: 2 }, 429, false),
    )
    const err = await run({ to: 'a@x.test', subject: 'S', text: 't' }, services).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(StepError)
    expect(err).toMatchObject({
      code: 'email_quota_exceeded',
      statusCode: 429,
      retryable: false,
      details: { limit: 5, used: 3, requested: 3, remaining: 2 },
    })
  })
})
