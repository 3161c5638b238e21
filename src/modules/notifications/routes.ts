import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  queryFlag,
  queryInteger,
  z,
  type Security,
} from '../../lib/http/index.js'
import { NotificationSchema } from './schemas.js'
import type { NotificationsService } from './service.js'

const tags = ['Notifications']
const base = '/api/v1/notifications'
const IdParams = z.object({ id: z.string().min(1).max(64) })

const list = defineRoute({
  method: 'get',
  path: base,
  operationId: 'notifications.list',
  summary: 'Your own notifications: unread first, then newest first',
  tags,
  permission: 'authenticated',
  request: {
    query: z.object({
      page: queryInteger({ min: 1, default: 1 }),
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
      unread: queryFlag.optional().openapi({ description: 'true: unread ones only' }),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({
        data: z.array(NotificationSchema),
        total: z.number().int(),
        page: z.number().int(),
        limit: z.number().int(),
        hasMore: z.boolean(),
        unread: z.number().int().openapi({ description: 'How many of yours are unread' }),
      }),
      'A page of your notifications',
    ),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})
const markRead = defineRoute({
  method: 'post',
  path: `${base}/{id}/read`,
  operationId: 'notifications.markRead',
  summary: 'Mark one of your notifications read',
  tags,
  permission: 'authenticated',
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ data: NotificationSchema }), 'The notification'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})
const markAllRead = defineRoute({
  method: 'post',
  path: `${base}/read-all`,
  operationId: 'notifications.markAllRead',
  summary: 'Mark all your notifications read',
  tags,
  permission: 'authenticated',
  responses: {
    200: jsonContent(z.object({ data: z.object({ updated: z.number().int() }) }), 'How many were unread'),
    ...errorResponses('unauthorized', 'forbidden'),
  },
})
const remove = defineRoute({
  method: 'delete',
  path: `${base}/{id}`,
  operationId: 'notifications.delete',
  summary: 'Delete one of your notifications',
  tags,
  permission: 'authenticated',
  request: { params: IdParams },
  responses: {
    200: jsonContent(z.object({ success: z.literal(true) }), 'Deleted'),
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'not_found'),
  },
})

/** /api/v1/notifications: the caller's own inbox (its live stream is the realtime module's /notifications/stream). */
export function notificationsRoutes(notifications: NotificationsService, security: Security) {
  const r = createRouter(security)
  r.openapi(list, async (c) => {
    const { page, limit, unread } = c.req.valid('query')
    return c.json(await notifications.list(principalOf(c), { page, limit, unread: unread ?? false }), 200)
  })
  r.openapi(markRead, async (c) =>
    c.json({ data: await notifications.markRead(principalOf(c), c.req.valid('param').id) }, 200),
  )
  r.openapi(markAllRead, async (c) => c.json({ data: await notifications.markAllRead(principalOf(c)) }, 200))
  r.openapi(remove, async (c) => {
    await notifications.delete(principalOf(c), c.req.valid('param').id)
    return c.json({ success: true as const }, 200)
  })
  return r
}
