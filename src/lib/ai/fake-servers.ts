import type { ServerResponse } from 'node:http'
import { startTestServer, type Received, type TestServer } from '../outbound/test-servers.js'

/**
 * Fake AI providers for tests, on 127.0.0.1, speaking each wire protocol: Workers AI's REST API
 * (`POST /client/v4/accounts/{account}/ai/run/{model}` → `{ result: { response, usage }, success, errors,
 * messages }`; image models answer PNG bytes, or `{ result: { image } }` for a flux model) and the
 * OpenAI API (`POST /v1/chat/completions`, `POST /v1/images/generations` with b64_json). Each answers from
 * a queue of scripted replies (then `{ text: 'ok' }`), and refuses a request without the expected bearer
 * token with 401.
 */

/** What the next call answers: text with a usage figure (null: none reported), an error status with a body, or a body as it is. */
export interface FakeReply {
  readonly text?: string
  /** total tokens reported; null reports no usage. Default 10. */
  readonly usage?: number | null
  readonly status?: number
  readonly body?: unknown
}

export interface FakeProvider {
  readonly server: TestServer
  /** The base URL to configure (CF_AI_BASE_URL or OPENAI_BASE_URL). */
  readonly baseUrl: string
  readonly received: Received[]
  /** Queues replies for the next calls. */
  queue(...replies: FakeReply[]): void
  /** Forgets what was received and queued. */
  reset(): void
  close(): Promise<void>
}

/** A 1×1 PNG. */
export const tinyPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
)

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

async function startFake(
  token: string | null,
  handle: (req: Received, res: ServerResponse, reply: FakeReply) => void,
  basePath: string,
): Promise<FakeProvider> {
  const replies: FakeReply[] = []
  const server = await startTestServer((req, res) => {
    if (token !== null && req.headers.authorization !== `Bearer ${token}`)
      return send(res, 401, {
        error: { message: 'bad token' },
        errors: [{ code: 10000, message: 'Authentication error' }],
        success: false,
      })
    const reply = replies.shift() ?? { text: 'ok' }
    if (reply.status !== undefined && reply.status >= 300)
      return send(res, reply.status, reply.body ?? { error: { message: `failed with ${reply.status}` } })
    handle(req, res, reply)
  })
  return {
    server,
    baseUrl: `${server.origin}${basePath}`,
    received: server.received,
    queue: (...more) => void replies.push(...more),
    reset: () => {
      replies.length = 0
      server.received.length = 0
    },
    close: () => server.close(),
  }
}

const usageBody = (usage: number | null | undefined) => {
  const total = usage === undefined ? 10 : usage
  return total === null
    ? {}
    : {
        usage: {
          prompt_tokens: Math.floor(total / 2),
          completion_tokens: total - Math.floor(total / 2),
          total_tokens: total,
        },
      }
}

/** A fake Workers AI REST API; its base URL ends in /client/v4. */
export function startFakeWorkersAi(token: string): Promise<FakeProvider> {
  return startFake(
    token,
    (req, res, reply) => {
      const match = /^\/client\/v4\/accounts\/[^/]+\/ai\/run\/(.+)$/.exec(req.path)
      if (req.method !== 'POST' || !match)
        return send(res, 404, { success: false, errors: [{ code: 7000, message: 'No route for that URI' }] })
      if (reply.body !== undefined) return send(res, reply.status ?? 200, reply.body)
      const model = match[1]!
      if (model.includes('stable-diffusion'))
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(tinyPng)
      if (model.includes('flux'))
        return send(res, 200, {
          result: { image: tinyPng.toString('base64') },
          success: true,
          errors: [],
          messages: [],
        })
      send(res, 200, {
        result: { response: reply.text ?? 'ok', ...usageBody(reply.usage) },
        success: true,
        errors: [],
        messages: [],
      })
    },
    '/client/v4',
  )
}

/** A fake OpenAI-compatible API; its base URL ends in /v1. `token` null accepts any (a local server's). */
export function startFakeOpenAi(token: string | null): Promise<FakeProvider> {
  return startFake(
    token,
    (req, res, reply) => {
      if (reply.body !== undefined) return send(res, reply.status ?? 200, reply.body)
      if (req.method === 'POST' && req.path === '/v1/chat/completions') {
        const model = (JSON.parse(req.body) as { model?: string }).model ?? 'unknown'
        return send(res, 200, {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1_700_000_000,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: reply.text ?? 'ok' }, finish_reason: 'stop' }],
          ...usageBody(reply.usage),
        })
      }
      if (req.method === 'POST' && req.path === '/v1/images/generations') {
        return send(res, 200, {
          created: 1_700_000_000,
          data: [{ b64_json: tinyPng.toString('base64') }],
          ...(reply.usage ? usageBody(reply.usage) : {}),
        })
      }
      send(res, 404, { error: { message: 'not found' } })
    },
    '/v1',
  )
}
