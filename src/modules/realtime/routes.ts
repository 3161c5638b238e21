import { AppError } from '../../lib/errors.js'
import { createRouter, defineRoute, errorResponses, principalOf, requestIdOf, z } from '../../lib/http/index.js'
import type { Realtime } from './service.js'
import { openEventStream } from './sse.js'
import type { StreamAuth } from './stream-auth.js'
import { createWebSockets, upgradeOf } from './websocket.js'

const StreamQuery = z.object({
  filter: z
    .string()
    .max(16_384)
    .optional()
    .openapi({ description: 'JSON, object or array format, as in list; checked against the fields you may read' }),
  ids: z.string().max(6600).optional().openapi({ description: 'Comma-separated record ids (up to 100)' }),
  token: z.string().max(4096).optional().openapi({
    description:
      'For browsers: a session token, an sk- key or an sct1. capability token, instead of the Authorization header',
  }),
})

const stream = defineRoute({
  method: 'get',
  path: '/api/v1/collections/{name}/stream',
  operationId: 'realtime.stream',
  summary: 'Record events as Server-Sent Events; the same path upgraded to WebSocket sends them as JSON messages',
  tags: ['Realtime'],
  permission: 'collections/{name}:read',
  request: { params: z.object({ name: z.string().min(1).max(100) }), query: StreamQuery },
  responses: {
    200: {
      description:
        'An event stream: `event: record.create|record.update|record.delete`, `data: { type, collection, record, at }`',
      content: { 'text/event-stream': { schema: z.string() } },
    },
    101: { description: 'Switched to WebSocket (Upgrade: websocket)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden', 'collection_not_found', 'record_not_found'),
  },
})

const inboxStream = defineRoute({
  method: 'get',
  path: '/api/v1/notifications/stream',
  operationId: 'notifications.stream',
  summary:
    'Your notifications live, as Server-Sent Events; the same path upgraded to WebSocket sends them as JSON messages',
  tags: ['Notifications'],
  permission: 'authenticated',
  request: { query: z.object({ token: StreamQuery.shape.token }) },
  responses: {
    200: {
      description:
        'An event stream: `event: notification.create`, `data: { type, notification }`, for the signed-in person only',
      content: { 'text/event-stream': { schema: z.string() } },
    },
    101: { description: 'Switched to WebSocket (Upgrade: websocket)' },
    ...errorResponses('invalid_request', 'unauthorized', 'forbidden'),
  },
})

/** Tells the Node adapter (and src/http/server.ts for upgrades) that the response was written directly. */
const alreadySent = () => new Response(null, { headers: { 'x-hono-already-sent': '1' } })

function stoppingOf(env: unknown): AbortSignal | undefined {
  const signal = (env as { stopping?: unknown } | undefined)?.stopping
  return signal instanceof AbortSignal ? signal : undefined
}

/** GET /api/v1/collections/{name}/stream and GET /api/v1/notifications/stream, as SSE or (with Upgrade: websocket) as WebSocket. */
export function realtimeRoutes(realtime: Realtime, auth: StreamAuth) {
  const router = createRouter(auth.security)
  const sockets = createWebSockets()
  router.openapi(stream, async (c) => {
    const { name } = c.req.valid('param')
    const { filter, ids } = c.req.valid('query')
    const incoming = c.env?.incoming
    const upgrade = upgradeOf(c.env)
    if (upgrade && incoming) sockets.assertHandshake(incoming)
    const subscription = await realtime.subscribe(auth.callerOf(principalOf(c)), name, { filter, ids })
    const stopping = stoppingOf(c.env)

    if (upgrade && incoming) {
      const headers = ['X-API-Version: v1', `X-Request-ID: ${requestIdOf(c)}`]
      const greeting = { type: 'stream.connected', collection: name }
      sockets.accept(incoming, upgrade, headers, { ...realtime.options, greeting }, (sink) =>
        realtime.attach(subscription, sink, stopping),
      )
      return alreadySent()
    }
    const outgoing = c.env?.outgoing
    if (!outgoing) throw new AppError('invalid_request', 'Streams are served by the Node server only')
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'Content-Type': 'text/event-stream; charset=utf-8' })
    // Headers middleware set so far (CORS) go out with the stream.
    const headers = Object.fromEntries(c.res.headers.entries())
    realtime.attach(subscription, openEventStream(outgoing, headers, realtime.options), stopping)
    return alreadySent()
  })
  router.openapi(inboxStream, async (c) => {
    const incoming = c.env?.incoming
    const upgrade = upgradeOf(c.env)
    if (upgrade && incoming) sockets.assertHandshake(incoming)
    const caller = auth.callerOf(principalOf(c))
    realtime.assertInboxCaller(caller)
    const stopping = stoppingOf(c.env)
    if (upgrade && incoming) {
      const headers = ['X-API-Version: v1', `X-Request-ID: ${requestIdOf(c)}`]
      sockets.accept(
        incoming,
        upgrade,
        headers,
        { ...realtime.options, greeting: { type: 'stream.connected', stream: 'notifications' } },
        (sink) => realtime.attachInbox(caller, sink, stopping),
      )
      return alreadySent()
    }
    const outgoing = c.env?.outgoing
    if (!outgoing) throw new AppError('invalid_request', 'Streams are served by the Node server only')
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'Content-Type': 'text/event-stream; charset=utf-8' })
    const headers = Object.fromEntries(c.res.headers.entries())
    realtime.attachInbox(caller, openEventStream(outgoing, headers, realtime.options), stopping)
    return alreadySent()
  })
  return router
}
