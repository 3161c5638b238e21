import { errorFor } from './errors.js'
import {
  endOfClosedMessage,
  type Connection,
  type ConnectionEnd,
  type ConnectionHandlers,
  type StreamMessage,
} from './realtime-connection.js'
import type { WebSocketConstructor, WebSocketLike } from './realtime-types.js'

/** The close codes the server uses after a refusal (docs/realtime.md#websocket), for a close with no message. */
const refusals: Record<number, [number, string]> = {
  4401: [401, 'unauthorized'],
  4403: [403, 'forbidden'],
  4404: [404, 'not_found'],
  1008: [400, 'invalid_request'],
}

/**
 * One WebSocket stream. The credential travels in `?token=` (a browser's WebSocket cannot set headers; the
 * server never logs the query). Open means the server's `stream.connected` greeting arrived.
 */
export function openWebSocketStream(
  WebSocketImpl: WebSocketConstructor,
  url: string,
  handlers: ConnectionHandlers,
): Connection {
  let socket: WebSocketLike
  let opened = false
  let finished = false
  let closedMessage: ConnectionEnd | undefined
  let gone!: () => void
  const done = new Promise<void>((resolve) => {
    gone = resolve
  })
  const end = (how: ConnectionEnd) => {
    if (finished) return
    finished = true
    handlers.end(how)
  }
  try {
    socket = new WebSocketImpl(url)
  } catch (err) {
    // A malformed URL or a blocked scheme: the platform throws at once.
    queueMicrotask(() =>
      end({ retry: true, beforeOpen: true, reason: err instanceof Error ? err.message : String(err) }),
    )
    gone()
    return { transport: 'websocket', close: () => ((finished = true), done) }
  }
  socket.onmessage = (event: { data: unknown }) => {
    let message: StreamMessage
    try {
      message = JSON.parse(textOf(event.data)) as StreamMessage
    } catch {
      return
    }
    if (message.type === 'stream.connected') {
      opened = true
      if (!finished) handlers.open()
    } else if (message.type === 'stream.closed') closedMessage = endOfClosedMessage(message)
    else if (!finished) handlers.message(message, undefined)
  }
  // onerror is always followed by onclose, which says what happened.
  socket.onerror = () => {}
  socket.onclose = (event: { code: number; reason: string }) => {
    gone()
    if (closedMessage) return end(closedMessage)
    if (!opened)
      return end({ retry: true, beforeOpen: true, reason: `the WebSocket closed before it opened (${event.code})` })
    const refusal = refusals[event.code]
    if (refusal) {
      const [status, code] = refusal
      return end({
        error: errorFor(status, code, event.reason || code, {}),
        retry: false,
        reason: `closed ${event.code}`,
      })
    }
    // 1001 (the server stopping), 1006 (the connection lost), 1011 (a server error): worth another try.
    end({ retry: true, reason: `the WebSocket closed (${event.code}${event.reason ? ` ${event.reason}` : ''})` })
  }
  return {
    transport: 'websocket',
    close() {
      finished = true
      // CLOSING (2) or CLOSED (3): already on its way.
      if (socket.readyState < 2) socket.close(1000, 'unsubscribed')
      return done
    },
  }
}

function textOf(data: unknown): string {
  if (typeof data === 'string') return data
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new TextDecoder().decode(data as ArrayBuffer)
  return String(data)
}
