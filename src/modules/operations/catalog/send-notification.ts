import { z } from 'zod'
import { notificationServicesOf, throughService } from '../notify-step.js'
import { text } from '../schema-helpers.js'
import { defineOperation, StepError } from '../types.js'

/**
 * send_notification (automation spec "Operation configurations"; decision 038): puts a notification in a
 * user's in-app inbox and sends it live on their realtime channel. The recipient is `userId`, else (left
 * out) the run's user; a userId that resolves empty fails notification_recipient_empty. It must be a user
 * of the flow's own project: any other id is refused as notification_recipient_not_found without saying
 * whether it exists elsewhere.
 */
export const sendNotification = defineOperation({
  type: 'send_notification',
  category: 'communication',
  label: 'Send notification',
  description:
    "Puts a notification (title, message, type, link) in a project user's in-app inbox and sends it live on their realtime channel; userId left out means the run's user; a userId that resolves empty fails the step.",
  effects: 'writes',
  configSchema: z.strictObject({
    title: text(200, 1).describe('The title (a template)'),
    message: text(5000, 1).describe('The message (a template)'),
    type: z.enum(['info', 'success', 'warning', 'error']).default('info').describe('info, success, warning or error'),
    userId: text(64)
      .optional()
      .describe(
        "The recipient, a user of this project (a template); left out: the run's user; resolving empty fails the step",
      ),
    link: text(2000).optional().describe('Where the notification leads (a template)'),
  }),
  example: {
    title: 'New order {{$trigger.body.id}}',
    message: '{{$trigger.body.customer}} ordered {{$trigger.body.total}}',
    type: 'success',
    userId: '{{$trigger.body.ownerId}}',
    link: '/orders/{{$trigger.body.id}}',
  },
  async run(config, ctx) {
    // A userId that is given but resolves empty (an unassigned ticket's owner) fails: notifying the run's own
    // user instead would tell the wrong person. Only a userId left out means the run's user.
    if (config.userId !== undefined && config.userId.trim() === '') {
      throw new StepError(
        'notification_recipient_empty',
        "userId resolved to nothing, so there is no one to notify (leave userId out to notify the run's user)",
        {},
        400,
        false,
      )
    }
    const userId = config.userId?.trim() ?? ctx.principal.userId
    if (!userId)
      throw new StepError(
        'notification_no_recipient',
        'No userId, and the run acts for nobody (a webhook or system run): name the recipient in userId',
        {},
        400,
        false,
      )
    const { notifications } = notificationServicesOf(ctx)
    const made = await throughService(
      () =>
        notifications.send(ctx.principal, {
          userId,
          title: config.title,
          message: config.message,
          type: config.type,
          link: config.link?.trim() || null,
          flowId: ctx.run.flowId,
          runId: ctx.run.id,
        }),
      { not_found: 'notification_recipient_not_found' },
    )
    return { notificationId: made?.id ?? null, userId, type: config.type }
  },
})
