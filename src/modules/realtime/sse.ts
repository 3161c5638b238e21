import type { ServerResponse } from 'node:http'
import { closeSignal, type Sink, type SinkOptions } from './sink.js'

/** How long a browser's EventSource waits before it reconnects (the `retry:` line). */
const retryMs = 3000

/**
 * Turns a Node response into a Server-Sent Events stream: `retry:` and a `: connected` comment at once,
 * then `id:` / `event:` / `data:` per event and a `: heartbeat` comment every `heartbeatMs`. Writes go
 * straight to the response so that what waits for the client is known (`writableLength` counts Node's
 * buffer and the socket's); once more than the cap waits, the connection is destroyed at the next write
 * (event or heartbeat) rather than buffered without bound.
 */
export function openEventStream(res: ServerResponse, headers: Record<string, string>, options: SinkOptions): Sink {
  const signal = closeSignal()
  res.writeHead(200, {
    ...headers,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    // Proxies such as nginx buffer responses unless told not to.
    'X-Accel-Buffering': 'no',
  })
  // A heartbeat that cannot be written means the connection is broken: drop it.
  const heartbeat = options.clock.every(options.heartbeatMs, () => write(': heartbeat\n\n'), { onError: () => drop() })
  signal.onClose(() => void heartbeat.stop())
  res.once('close', () => signal.fire())

  function write(text: string | Buffer): void {
    if (signal.closed || res.writableEnded || res.destroyed) return
    // Judged before writing: one large event never drops a client that reads, and what waits stays under
    // the cap plus one event.
    if (res.writableLength > options.maxBufferedBytes) return drop()
    res.write(text)
  }

  function drop(): void {
    res.destroy()
    signal.fire()
  }

  write(`retry: ${retryMs}\n: connected\n\n`)
  return {
    send(frame) {
      write(frame.sse())
    },
    close(reason) {
      if (signal.closed) return
      if (reason) write(`event: stream.closed\ndata: ${JSON.stringify({ type: 'stream.closed', ...reason })}\n\n`)
      if (!res.destroyed) res.end()
      signal.fire()
    },
    drop,
    onClose: signal.onClose,
  }
}
