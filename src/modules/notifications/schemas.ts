import { z } from '../../lib/http/index.js'

export const notificationTypes = ['info', 'success', 'warning', 'error'] as const
export type NotificationType = (typeof notificationTypes)[number]

/** One notification as its recipient sees it. */
export const NotificationSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    message: z.string(),
    type: z.enum(notificationTypes),
    link: z.string().nullable(),
    read: z.boolean(),
    readAt: z.string().nullable().openapi({ description: 'ISO 8601; null while unread' }),
    createdAt: z.string().openapi({ description: 'ISO 8601' }),
    flowId: z.string().nullable().openapi({ description: 'The flow that sent it (null when Plinth sent it otherwise)' }),
    runId: z.string().nullable(),
  })
  .openapi('Notification')
export type Notification = z.output<typeof NotificationSchema>

/** The bounds of what a sender may put in a notification (send_notification's config schema repeats them). */
export const notificationBounds = { title: 200, message: 5000, link: 2000 } as const

/** What a sender hands the service: checked again here, whoever calls. */
export const SendSchema = z.strictObject({
  userId: z.string().min(1).max(64),
  title: z.string().min(1).max(notificationBounds.title),
  message: z.string().max(notificationBounds.message),
  type: z.enum(notificationTypes).default('info'),
  link: z.string().max(notificationBounds.link).nullable().optional(),
  flowId: z.string().max(64).nullable().optional(),
  runId: z.string().max(64).nullable().optional(),
  dedupeKey: z.string().max(200).nullable().optional(),
})
export type SendInput = z.input<typeof SendSchema>

/** What the realtime channel of the recipient carries. */
export interface InboxMessage {
  readonly type: 'notification.create'
  readonly notification: Notification
}
