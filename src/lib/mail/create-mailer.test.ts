import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../../config.js'
import { AppError } from '../errors.js'
import { createMailer } from './create-mailer.js'
import type { EmailConfig, MailMessage, Mailer } from './types.js'

// Compile-time check that the app's configuration can be handed over as is.
const _fromConfig = (email: Config['email']): EmailConfig => email

const noChannel: EmailConfig = { channel: 'email_no_channel', from: 'x@y.z', smtpUrl: null, apiUrl: null, apiKey: null }

async function sendError(mailer: Mailer, message: MailMessage): Promise<AppError> {
  try {
    await mailer.send(message)
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('expected the send to fail')
}

describe('createMailer', () => {
  let requests = 0
  const server = createServer((_req, res) => {
    requests++
    res.writeHead(202).end()
  })
  let rest: EmailConfig
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`
    rest = { channel: 'rest_api', from: 'x@y.z', smtpUrl: null, apiUrl, apiKey: 'k' }
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  it('without a channel, every send is service_unavailable and closing is harmless', async () => {
    const mailer = createMailer(noChannel)
    expect(mailer.channel).toBe('email_no_channel')
    const err = await sendError(mailer, { to: 'ada@example.com', subject: 'S', text: 'T' })
    expect(err.code).toBe('service_unavailable')
    expect(err.message).toBe('No email channel is configured')
    await mailer.close()
  })

  it.each([
    ['email_binding without an SMTP URL', { ...noChannel, channel: 'email_binding' as const }],
    ['rest_api without a URL', { ...noChannel, channel: 'rest_api' as const, apiKey: 'secret-key-123' }],
    ['rest_api without a key', { ...noChannel, channel: 'rest_api' as const, apiUrl: 'http://127.0.0.1:1/' }],
    ['an unknown channel', { ...noChannel, channel: 'carrier_pigeon' as unknown as 'rest_api' }],
  ])('refuses %s with internal', (_name, config) => {
    let err: unknown
    try {
      createMailer(config)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('internal')
    expect((err as AppError).message).not.toContain('secret-key-123')
  })

  it.each([
    ['an address', 'ada@example.com'],
    ['tags and subdomains', 'ada.l+plinth@mail.example.co.uk'],
    ['a list of addresses', ['ada@example.com', 'grace@example.com']],
  ])('sends to %s', async (_name, to) => {
    const before = requests
    await createMailer(rest).send({ to, subject: 'S', text: 'T' })
    expect(requests).toBe(before + 1)
  })

  it.each([
    ['an empty recipient', { to: '' }],
    ['a list', { to: 'ada@example.com, eve@evil.test' }],
    ['a semicolon list', { to: 'ada@example.com;eve@evil.test' }],
    ['a display name', { to: 'Ada <ada@example.com>' }],
    ['a group', { to: 'all: ada@example.com, eve@evil.test;' }],
    ['two addresses with a space', { to: 'ada@example.com eve@evil.test' }],
    ['a header injection', { to: 'ada@example.com\r\nBcc: eve@evil.test' }],
    ['no at sign', { to: 'ada.example.com' }],
    ['two at signs', { to: 'ada@@example.com' }],
    ['an overlong address', { to: `${'a'.repeat(250)}@example.com` }],
    ['a non-string recipient', { to: 42 as unknown as string }],
    ['an empty list', { to: [] }],
    ['a list holding a list', { to: ['ada@example.com', 'bob@example.com, eve@evil.test'] }],
    ['a list of 51', { to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) }],
    ['a sender with a line break', { from: 'Ada <ada@example.com>\r\nBcc: eve@evil.test' }],
    ['a sender list', { from: 'ada@example.com, eve@evil.test' }],
    ['a reply-to with a display name', { replyTo: 'Eve <eve@evil.test>' }],
    ['a subject with a line break', { subject: 'Hi\r\nBcc: eve@evil.test' }],
    ['a subject with a bare newline', { subject: 'Hi\nthere' }],
    ['a missing text body', { text: undefined as unknown as string }],
    ['a non-string html body', { html: 42 as unknown as string }],
  ])('refuses %s with invalid_request before anything is sent', async (_name, change) => {
    const before = requests
    const err = await sendError(createMailer(rest), { to: 'ada@example.com', subject: 'S', text: 'T', ...change })
    expect(err.code).toBe('invalid_request')
    expect(err.message).not.toContain('evil')
    expect(requests).toBe(before)
  })

  it('after close, sends are service_unavailable and a second close is harmless', async () => {
    const mailer = createMailer(rest)
    await mailer.close()
    await mailer.close()
    const before = requests
    const err = await sendError(mailer, { to: 'ada@example.com', subject: 'S', text: 'T' })
    expect(err.code).toBe('service_unavailable')
    expect(requests).toBe(before)
  })
})
