import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { createLogger } from '../log.js'
import { createMailer } from './create-mailer.js'
import type { EmailConfig, Mailer } from './types.js'

const apiKey = 'sk_test_9f8e7d6c5b4a-never-shown'
const from = 'Plinth <no-reply@plinth.test>'

interface Hit {
  method: string | undefined
  url: string | undefined
  headers: IncomingHttpHeaders
  body: string
}

// A real HTTP provider on a free port; each test sets how it answers.
const hits: Hit[] = []
let answer: (res: ServerResponse, hit: Hit) => void = (res) => res.writeHead(202).end()
const server = createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const hit = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
    hits.push(hit)
    answer(res, hit)
  })
})
let base = ''

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})
afterEach(() => {
  hits.length = 0
  answer = (res) => res.writeHead(202).end()
})

function restConfig(apiUrl = `${base}/v1/send`): EmailConfig {
  return { channel: 'rest_api', from, smtpUrl: null, apiUrl, apiKey }
}

async function failure(mailer: Mailer): Promise<AppError> {
  try {
    await mailer.send({ to: 'ada@example.com', subject: 'Hello', text: 'Body' })
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('expected the send to fail')
}

function expectNoKey(err: AppError, lines: string[] = []): void {
  const seen = JSON.stringify({
    message: err.message,
    details: err.details,
    stack: err.stack,
    cause: String(err.cause),
    lines,
  })
  expect(seen).not.toContain(apiKey)
}

describe('rest_api channel (real HTTP server)', () => {
  it('POSTs the message as JSON with the bearer key and returns the provider id', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'msg_123' }))
    const mailer = createMailer(restConfig())
    expect(mailer.channel).toBe('rest_api')
    const message = { to: 'ada@example.com', subject: 'Welcome', text: 'Plain body', html: '<p>HTML body</p>' }
    expect(await mailer.send(message)).toEqual({ messageId: 'msg_123', accepted: true })

    expect(hits).toHaveLength(1)
    const [hit] = hits
    expect(hit?.method).toBe('POST')
    expect(hit?.url).toBe('/v1/send')
    expect(hit?.headers.authorization).toBe(`Bearer ${apiKey}`)
    expect(hit?.headers['content-type']).toBe('application/json')
    expect(JSON.parse(hit?.body ?? '')).toEqual({ from, ...message })
  })

  it('leaves html out of the body when there is none', async () => {
    await createMailer(restConfig()).send({ to: 'ada@example.com', subject: 'S', text: 'T' })
    expect(JSON.parse(hits[0]?.body ?? '')).toEqual({ from, to: 'ada@example.com', subject: 'S', text: 'T' })
  })

  it.each([
    ['an empty 202', (res: ServerResponse) => res.writeHead(202).end(), ''],
    ['a body that is not JSON', (res: ServerResponse) => res.writeHead(200).end('queued'), ''],
    ['messageId', (res: ServerResponse) => res.writeHead(200).end('{"messageId":"m-1"}'), 'm-1'],
    ['a numeric id', (res: ServerResponse) => res.writeHead(200).end('{"id":42}'), ''],
  ])('accepts %s', async (_name, respond, messageId) => {
    answer = respond
    expect(await createMailer(restConfig()).send({ to: 'ada@example.com', subject: 'S', text: 'T' })).toEqual({
      messageId,
      accepted: true,
    })
  })

  it.each([400, 401, 403, 422, 429, 500, 502, 503])(
    'a %i answer is service_unavailable with the status, never the key',
    async (status) => {
      // A provider that echoes the key and the message back must not get either into the error.
      answer = (res, hit) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad', echo: hit }))
      const lines: string[] = []
      const log = createLogger('debug', { write: (line: string) => void lines.push(line) })
      const err = await failure(createMailer(restConfig(), { log }))
      expect(err.code).toBe('service_unavailable')
      expect(err.status).toBe(503)
      expect(err.message).toBe('Email provider refused the message')
      expect(err.details).toEqual({ status })
      expectNoKey(err, lines)
      expect(JSON.stringify(err.details)).not.toContain('Body')
    },
  )

  it('does not follow a redirect, so the key is not sent anywhere else', async () => {
    answer = (res, hit) =>
      hit.url === '/v1/send' ? res.writeHead(307, { location: `${base}/elsewhere` }).end() : res.writeHead(202).end()
    const err = await failure(createMailer(restConfig()))
    expect(err.code).toBe('service_unavailable')
    expect(hits.map((h) => h.url)).toEqual(['/v1/send'])
    expectNoKey(err)
  })

  it('an unreachable provider is service_unavailable', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const err = await failure(createMailer(restConfig(`http://127.0.0.1:${port}/v1/send`)))
    expect(err.code).toBe('service_unavailable')
    expect(err.details).toEqual({ status: null })
    expectNoKey(err)
  })

  it('a URL carrying credentials fails without quoting them', async () => {
    // fetch refuses such URLs with a message that contains the URL.
    const err = await failure(createMailer(restConfig(`http://user:url-Secret-99@127.0.0.1:1/v1/send`)))
    expect(err.code).toBe('service_unavailable')
    expect(JSON.stringify({ m: err.message, d: err.details, s: err.stack })).not.toContain('url-Secret-99')
  })

  it('a provider slower than the timeout is given up on', async () => {
    answer = (res) => void setTimeout(() => res.writeHead(202).end(), 2000)
    const started = Date.now()
    const err = await failure(createMailer(restConfig(), { timeoutMs: 200 }))
    expect(err.code).toBe('service_unavailable')
    expect(err.details).toEqual({ status: null })
    expect(Date.now() - started).toBeLessThan(1500)
  })
})
