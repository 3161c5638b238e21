import { describe, expect, it } from 'vitest'
import {
  createClient,
  ForbiddenError,
  memoryTokenStore,
  type SubscriptionEvent,
} from '../../packages/client/src/index.js'

// The SSE reader and the reconnect rules against scripted answers (an injected fetch): field parsing across
// chunk boundaries (CRLF split in two, a comment cut in half, data on several lines), which answers are
// retried and which end the subscription, and the gap after a stream that ends. The same against a real
// server: realtime.test.ts.

type Script = (string | { status: number; body: unknown } | 'network-error')[]

/**
 * A fetch that answers each call with the next script: an SSE body in these chunks (then held open, or
 * ended where the script says '<end>'), an error answer, or no answer at all.
 */
function scriptedFetch(scripts: Script[]) {
  const calls: { url: string; headers: Record<string, string> }[] = []
  const fetch = (async (input: string, init: RequestInit) => {
    calls.push({ url: String(input), headers: init.headers as Record<string, string> })
    const script = scripts.shift()
    if (!script) return new Promise<never>(() => {}) // no more: hang, as a server that stopped answering
    const first = script[0]
    if (first === 'network-error') throw new TypeError('fetch failed')
    if (typeof first === 'object') {
      return new Response(JSON.stringify(first.body), {
        status: first.status,
        headers: { 'content-type': 'application/json' },
      })
    }
    const encoder = new TextEncoder()
    const chunks = script as string[]
    return new Response(
      new ReadableStream({
        pull(controller) {
          const next = chunks.shift()
          if (next === '<end>') controller.close()
          else if (next === undefined) return new Promise<void>(() => {})
          else controller.enqueue(encoder.encode(next))
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    )
  }) as typeof globalThis.fetch
  return { fetch, calls }
}

function clientWith(fetch: typeof globalThis.fetch) {
  const tokens = memoryTokenStore()
  tokens.set({ token: 'session-token' })
  return createClient({ url: 'http://plinth.test', tokens, fetch })
}

const event = (id: string, title: string) =>
  `id: ${id}\nevent: record.create\ndata: ${JSON.stringify({ type: 'record.create', collection: 't', record: { id, title }, at: 1 })}\n\n`

describe('SSE reader', () => {
  it('parses fields across chunk boundaries and multi-line data; a stream.closed ends it with the typed error', async () => {
    const { fetch, calls } = scriptedFetch([
      [
        'retry: 3000\r\n: conn',
        'ected\r',
        '\n\r\n',
        event('1', 'one').replace(/\n/g, '\r\n'),
        'id: 2\ndata: {"type":"record.update","collection":"t",\ndata: "record":{"id":"2","title":"two"},"at":2}\n',
        '\n: heartbeat\n\nid: 3\ndata: not json\n\n',
        'event: stream.closed\ndata: {"type":"stream.closed","error":"forbidden","message":"read was revoked"}\n\n',
      ],
    ])
    const seen: SubscriptionEvent[] = []
    const sub = clientWith(fetch).subscribe('t', { a: { _eq: 1 } }, (e) => seen.push(e), { transport: 'sse' })
    await sub.ready
    const error = await sub.closed
    expect(error).toBeInstanceOf(ForbiddenError)
    expect(error).toMatchObject({ status: 403, code: 'forbidden', message: 'read was revoked' })
    expect(seen).toEqual([
      { type: 'record.create', collection: 't', record: { id: '1', title: 'one' }, at: 1, eventId: '1' },
      { type: 'record.update', collection: 't', record: { id: '2', title: 'two' }, at: 2, eventId: '2' },
    ])
    expect(calls).toHaveLength(1)
    expect(calls[0]!.url).toBe(
      `http://plinth.test/api/v1/collections/t/stream?filter=${encodeURIComponent('{"a":{"_eq":1}}')}`,
    )
    expect(calls[0]!.headers).toMatchObject({ accept: 'text/event-stream', authorization: 'Bearer session-token' })
  })

  it('retries no answer, 503 and 429; after a stream that ends it reconnects and reports the gap first', async () => {
    const { fetch, calls } = scriptedFetch([
      ['network-error'],
      [{ status: 503, body: { error: 'service_unavailable', message: 'stopping' } }],
      [': connected\n\n', event('1', 'one'), '<end>'],
      [{ status: 429, body: { error: 'rate_limited', message: 'slow down' } }],
      [': connected\n\n', event('2', 'two')],
    ])
    const seen: SubscriptionEvent[] = []
    const sub = clientWith(fetch).subscribe('t', (e) => seen.push(e), {
      transport: 'sse',
      reconnect: { initialDelayMs: 1, maxDelayMs: 2 },
    })
    await sub.ready
    while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 5))
    await sub.close()
    expect(calls).toHaveLength(5)
    expect(seen.map((e) => (e.type === 'gap' ? `gap after ${e.lastEventId}` : e.record.id))).toEqual([
      '1',
      'gap after 1',
      '2',
    ])
    expect(sub.state).toBe('closed')
  })

  it('a refusal ends it at once (no retry); without reconnect a lost stream ends it with a NetworkError', async () => {
    const refused = scriptedFetch([[{ status: 404, body: { error: 'collection_not_found', message: 'no' } }]])
    const sub = clientWith(refused.fetch).subscribe('t', () => {}, { transport: 'sse' })
    await expect(sub.ready).rejects.toMatchObject({ status: 404, code: 'collection_not_found' })
    expect(refused.calls).toHaveLength(1)

    const once = scriptedFetch([[': connected\n\n', '<end>']])
    const single = clientWith(once.fetch).subscribe('t', () => {}, { transport: 'sse', reconnect: false })
    await single.ready
    expect(await single.closed).toMatchObject({ status: null, code: 'disconnected' })
  })
})
