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
    flowId: z
      .string()
      .nullable()
      .openapi({ description: 'The flow that sent it (null when Plinth sent it otherwise)' }),
    runId: z.string().nullable(),
  })
  .openapi('Notification')
export type Notification = z.output<typeof NotificationSchema>

/** The bounds of what a sender may put in a notification (send_notification's config schema repeats them). */
export const notificationBounds = { title: 200, message: 5000, link: 2000 } as const

/** The schemes a notification's link may have; a path (no scheme) is fine too. */
const linkSchemes = new Set(['http:', 'https:', 'mailto:'])

/**
 * Whether a link is a path or an http(s) or mailto URL, read as a browser reads an href (the WHATWG URL
 * parser drops leading spaces and control characters and tabs and newlines inside, so ` java\tscript:` is
 * `javascript:`): an app that puts `link` in an href must not run a sender's script. Throws nothing.
 */
export function isSafeLink(link: string): boolean {
  try {
    return linkSchemes.has(new URL(link, 'http://relative.invalid/').protocol)
  } catch {
    return false
  }
}

/** Text a notification stores: PostgreSQL cannot hold U+0000, so it is refused on every database alike. */
const storedText = (max: number, min = 0) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain the character U+0000')

/** What a sender hands the service: checked again here, whoever calls. */
export const SendSchema = z.strictObject({
  userId: z.string().min(1).max(64),
  title: storedText(notificationBounds.title, 1),
  message: storedText(notificationBounds.message),
  type: z.enum(notificationTypes).default('info'),
  link: storedText(notificationBounds.link)
    .refine(isSafeLink, 'must be a path, or an http, https or mailto URL')
    .nullable()
    .optional(),
  flowId: z.string().max(64).nullable().optional(),
  runId: z.string().max(64).nullable().optional(),
  dedupeKey: storedText(200).nullable().optional(),
})
export type SendInput = z.input<typeof SendSchema>

/** What the realtime channel of the recipient carries. */
export interface InboxMessage {
  readonly type: 'notification.create'
  readonly notification: Notification
}
