import { PlinthError, RateLimitError } from './errors.js'
import {
  endOfClosedMessage,
  retryableStatus,
  type Connection,
  type ConnectionEnd,
  type ConnectionHandlers,
  type StreamMessage,
} from './realtime-connection.js'
import type { Query, Transport } from './transport.js'

/**
 * A Server-Sent Events stream read with fetch rather than EventSource: fetch can send the credential as a
 * header (EventSource cannot), works in Node 20 and browsers alike, and leaves reconnecting to the caller,
 * which knows the stream's rules (EventSource would reconnect on its own and hide the gap).
 */
export function openEventStream(
  transport: Transport,
  path: string,
  query: Query,
  handlers: ConnectionHandlers,
  idleTimeoutMs: number,
): Connection {
  const controller = new AbortController()
  let finished = false
  let idle: ReturnType<typeof setTimeout> | undefined
  const done = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve()))

  const end = (how: ConnectionEnd) => {
    if (finished) return
    finished = true
    clearTimeout(idle)
    controller.abort()
    handlers.end(how)
  }
  // The server sends a comment every 25 s; silence beyond the timeout means a connection that died unseen.
  const touch = () => {
    clearTimeout(idle)
    idle = setTimeout(() => end({ retry: true, reason: `no data for ${idleTimeoutMs} ms` }), idleTimeoutMs)
  }

  void (async () => {
    let res: Response
    try {
      touch()
      res = await transport.request<Response>('GET', path, {
        query,
        headers: { accept: 'text/event-stream' },
        signal: controller.signal,
        as: 'response',
      })
    } catch (err) {
      if (finished) return
      const error = err instanceof PlinthError ? err : undefined
      const retryAfter = err instanceof RateLimitError ? err.retryAfter : undefined
      return end({ error, retry: retryableStatus(error?.status ?? null), reason: describe(err), retryAfter })
    }
    if (!res.body) return end({ retry: true, reason: 'the stream answered without a body' })
    try {
      await readEvents(res.body, {
        comment: (text) => {
          touch()
          if (text.trim() === 'connected') handlers.open()
        },
        event: (data, id) => {
          touch()
          let message: StreamMessage
          try {
            message = JSON.parse(data) as StreamMessage
          } catch {
            return
          }
          if (message.type === 'stream.closed') end(endOfClosedMessage(message))
          else if (!finished) handlers.message(message, id)
        },
      })
      end({ retry: true, reason: 'the server ended the stream' })
    } catch (err) {
      end({ retry: true, reason: describe(err) })
    }
  })()

  return {
    transport: 'sse',
    close() {
      finished = true
      clearTimeout(idle)
      controller.abort()
      return done
    },
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

interface EventSink {
  comment(text: string): void
  event(data: string, id: string | undefined): void
}

/** Parses a text/event-stream body (the WHATWG rules: `field: value` lines, a blank line ends an event). */
async function readEvents(body: ReadableStream<Uint8Array>, sink: EventSink): Promise<void> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let id: string | undefined
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) sink.event(data.join('\n'), id)
      data = []
      return
    }
    if (text.startsWith(':')) return sink.comment(text.slice(1))
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'data') data.push(value)
    else if (field === 'id') id = value
    // `event:` repeats the JSON's own `type`; `retry:` is for EventSource, the caller has its own backoff.
  }
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let cut: number
      while ((cut = buffer.search(/\r\n|\r|\n/)) !== -1) {
        const text = buffer.slice(0, cut)
        const width = buffer.startsWith('\r\n', cut) ? 2 : 1
        // A lone \r at the end of a chunk may be half of \r\n: wait for the next chunk.
        if (width === 1 && buffer[cut] === '\r' && cut === buffer.length - 1) break
        buffer = buffer.slice(cut + width)
        line(text)
      }
    }
  } finally {
    reader.releaseLock()
  }
}
