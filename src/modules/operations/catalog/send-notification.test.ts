import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { sendNotification } from './send-notification.js'

const safe = (config: Record<string, unknown>) => sendNotification.configSchema.safeParse(config).success
const alice = principals.user(
  { homeProjectId: 'p1', userId: 'alice', roleId: 'r', roleName: 'editor', superAdmin: false },
  { id: 's', expiresAt: 2e9 },
)

function fake(known: string[]) {
  const sent: { sender: Principal; input: Record<string, unknown> }[] = []
  return {
    sent,
    services: {
      notifications: {
        async send(sender: Principal, input: { userId: string }) {
          if (!known.includes(input.userId))
            throw new AppError('not_found', `No user ${input.userId} in this project`, { userId: input.userId })
          sent.push({ sender, input })
          return { id: `n-${sent.length}` }
        },
        adminIds: async () => [],
      },
    },
  }
}

describe('send_notification', () => {
  it("sends to userId as the run's principal, with the flow and run it came from", async () => {
    const { services, sent } = fake(['bob'])
    const { ctx } = testContext({}, { services })
    const config = sendNotification.configSchema.parse({
      title: 'T',
      message: 'M',
      type: 'warning',
      userId: 'bob',
      link: '/x',
    })
    expect(await sendNotification.run(config, ctx)).toEqual({ notificationId: 'n-1', userId: 'bob', type: 'warning' })
    expect(sent[0]).toMatchObject({
      sender: ctx.principal,
      input: { userId: 'bob', title: 'T', message: 'M', type: 'warning', link: '/x', flowId: 'flow-1', runId: 'run-1' },
    })
  })
  it("without userId, the run's user; a run acting for nobody fails notification_no_recipient", async () => {
    const { services, sent } = fake(['alice'])
    const { ctx } = testContext({}, { services })
    const config = sendNotification.configSchema.parse({ title: 'T', message: 'M' })
    await sendNotification.run(config, { ...ctx, principal: alice })
    expect(sent[0]?.input).toMatchObject({ userId: 'alice', type: 'info', link: null })
    await expect(sendNotification.run(config, ctx)).rejects.toMatchObject({
      code: 'notification_no_recipient',
      retryable: false,
    })
  })
  it("a userId given but resolving empty fails notification_recipient_empty, never the run's user", async () => {
    const { services, sent } = fake(['alice'])
    const { ctx } = testContext({}, { services })
    for (const userId of ['', '   ']) {
      const config = sendNotification.configSchema.parse({ title: 'T', message: 'M', userId })
      await expect(sendNotification.run(config, { ...ctx, principal: alice })).rejects.toMatchObject({
        code: 'notification_recipient_empty',
        statusCode: 400,
        retryable: false,
      })
    }
    expect(sent).toEqual([])
  })
  it('a recipient outside the project is notification_recipient_not_found (404, not retried)', async () => {
    const { services } = fake([])
    const { ctx } = testContext({}, { services })
    const attempt = sendNotification.run(
      sendNotification.configSchema.parse({ title: 'T', message: 'M', userId: 'elsewhere' }),
      ctx,
    )
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'notification_recipient_not_found',
      statusCode: 404,
      retryable: false,
      details: { userId: 'elsewhere' },
    })
  })
  it('title 1-200, message 1-5000, type one of four, link up to 2000', () => {
    expect(safe({ title: 'x', message: 'y' })).toBe(true)
    expect(safe({ title: '', message: 'y' })).toBe(false)
    expect(safe({ title: 'x'.repeat(200), message: 'y' })).toBe(true)
    expect(safe({ title: 'x'.repeat(201), message: 'y' })).toBe(false)
    expect(safe({ title: 'x', message: 'y'.repeat(5001) })).toBe(false)
    expect(safe({ title: 'x', message: 'y', type: 'loud' })).toBe(false)
    expect(safe({ title: 'x', message: 'y', link: 'l'.repeat(2001) })).toBe(false)
    expect(safe({ title: 'x', message: 'y', extra: 1 })).toBe(false)
  })
})
