import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net'
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../errors.js'
import { createLogger } from '../log.js'
import { createMailer } from './create-mailer.js'
import type { EmailConfig, Mailer } from './types.js'

const user = 'plinth-mailer'
// Characters that need URL encoding, to prove the URL's password reaches the server decoded.
const password = 'p@ss:w0rd/S3cret!'
const from = 'Plinth <no-reply@plinth.test>'

interface Received {
  mailFrom: string
  rcptTo: string[]
  raw: string
  user: string | undefined
}

// A real SMTP server on a free port: plain TCP, no STARTTLS, recording what it receives.
async function startSmtp(
  options: Partial<SMTPServerOptions>,
): Promise<{ port: number; received: Received[]; stop: () => Promise<void> }> {
  const received: Received[] = []
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) return callback(null, { user: auth.username })
      callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }))
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      if (address.address.endsWith('@refused.test')) {
        return callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }))
      }
      callback()
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom
        received.push({
          mailFrom: mailFrom ? mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: session.user as string | undefined,
        })
        callback()
      })
    },
    ...options,
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  return { port, received, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

function smtpConfig(url: string): EmailConfig {
  return { channel: 'email_binding', from, smtpUrl: url, apiUrl: null, apiKey: null }
}

async function failure(mailer: Mailer, to = 'ada@example.com'): Promise<AppError> {
  try {
    await mailer.send({ to, subject: 'Hello', text: 'Body' })
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    return err as AppError
  }
  throw new Error('expected the send to fail')
}

function everything(err: AppError, logLines: string[]): string {
  return JSON.stringify({
    message: err.message,
    details: err.details,
    stack: err.stack,
    cause: String(err.cause),
    logLines,
  })
}

describe('email_binding channel (real SMTP server)', () => {
  let withAuth: Awaited<ReturnType<typeof startSmtp>>
  let open: Awaited<ReturnType<typeof startSmtp>>
  const authUrl = () => `smtp://${user}:${encodeURIComponent(password)}@127.0.0.1:${withAuth.port}`

  beforeAll(async () => {
    withAuth = await startSmtp({ authOptional: false })
    open = await startSmtp({ authOptional: true })
  })
  afterAll(async () => {
    await withAuth?.stop()
    await open?.stop()
  })

  it('delivers a text message with the URL credentials, sender, recipient, subject and body', async () => {
    const mailer = createMailer(smtpConfig(authUrl()))
    expect(mailer.channel).toBe('email_binding')
    const result = await mailer.send({
      to: 'ada@example.com',
      subject: 'Welcome to Plinth',
      text: 'Your code is 123456.',
    })
    await mailer.close()

    expect(result.accepted).toBe(true)
    expect(result.messageId).toMatch(/^<.+@.+>$/)
    const got = withAuth.received.at(-1)
    expect(got?.user).toBe(user)
    expect(got?.mailFrom).toBe('no-reply@plinth.test')
    expect(got?.rcptTo).toEqual(['ada@example.com'])
    expect(got?.raw).toContain('Subject: Welcome to Plinth\r\n')
    expect(got?.raw).toContain('To: ada@example.com\r\n')
    expect(got?.raw).toContain('From: Plinth <no-reply@plinth.test>\r\n')
    expect(got?.raw).toContain(`Message-ID: ${result.messageId}\r\n`)
    expect(got?.raw).toContain('\r\n\r\nYour code is 123456.')
  })

  it('sends text and HTML as alternatives', async () => {
    const mailer = createMailer(smtpConfig(authUrl()))
    await mailer.send({
      to: 'grace@example.com',
      subject: 'Reset',
      text: 'Plain reset body',
      html: '<p>HTML reset body</p>',
    })
    await mailer.close()
    const raw = withAuth.received.at(-1)?.raw ?? ''
    expect(raw).toMatch(/Content-Type: multipart\/alternative/)
    expect(raw).toContain('Plain reset body')
    expect(raw).toContain('<p>HTML reset body</p>')
  })

  it('sends one message to a list of recipients, with the sender and reply-to given', async () => {
    const mailer = createMailer(smtpConfig(authUrl()))
    await mailer.send({
      to: ['ada@example.com', 'grace@example.com'],
      subject: 'Both',
      text: 'One message',
      from: 'Ops <ops@plinth.test>',
      replyTo: 'help@plinth.test',
    })
    await mailer.close()
    const got = withAuth.received.at(-1)
    expect(got?.rcptTo).toEqual(['ada@example.com', 'grace@example.com'])
    expect(got?.mailFrom).toBe('ops@plinth.test')
    expect(got?.raw).toContain('To: ada@example.com, grace@example.com\r\n')
    expect(got?.raw).toContain('Reply-To: help@plinth.test\r\n')
  })
  it('sends without credentials to a server that does not ask for them', async () => {
    const mailer = createMailer(smtpConfig(`smtp://127.0.0.1:${open.port}`))
    const result = await mailer.send({ to: 'linus@example.com', subject: 'Open relay', text: 'No auth' })
    await mailer.close()
    expect(result.accepted).toBe(true)
    expect(open.received.at(-1)?.rcptTo).toEqual(['linus@example.com'])
    expect(open.received.at(-1)?.user).toBeUndefined()
  })

  it('a refused login is service_unavailable, and the password appears in neither the error nor the log', async () => {
    const wrong = 'Wr0ng-Secret-Passw0rd'
    const lines: string[] = []
    const log = createLogger('debug', { write: (line: string) => void lines.push(line) })
    const mailer = createMailer(smtpConfig(`smtp://${user}:${wrong}@127.0.0.1:${withAuth.port}`), { log })
    const before = withAuth.received.length
    const err = await failure(mailer)
    await mailer.close()

    expect(err.code).toBe('service_unavailable')
    expect(err.details).toEqual({ status: 535 })
    expect(err.cause).toBeUndefined()
    expect(withAuth.received).toHaveLength(before)
    const seen = everything(err, lines)
    for (const secret of [
      wrong,
      Buffer.from(`\0${user}\0${wrong}`).toString('base64'),
      Buffer.from(wrong).toString('base64'),
    ]) {
      expect(seen).not.toContain(secret)
    }
    expect(lines.join('')).toContain('EAUTH')
  })

  it('the configured password never leaks when the server is unreachable either', async () => {
    const closedPort = await freePort()
    const err = await failure(
      createMailer(smtpConfig(`smtp://${user}:${encodeURIComponent(password)}@127.0.0.1:${closedPort}`)),
    )
    expect(err.code).toBe('service_unavailable')
    expect(err.message).toBe('Email provider could not be reached')
    expect(err.details).toEqual({ status: null })
    expect(everything(err, [])).not.toContain('S3cret')
  })

  it('a refused recipient is service_unavailable with the SMTP reply code', async () => {
    const mailer = createMailer(smtpConfig(authUrl()))
    const err = await failure(mailer, 'nobody@refused.test')
    await mailer.close()
    expect(err.code).toBe('service_unavailable')
    expect(err.message).toBe('Email provider refused the message')
    expect(err.details).toEqual({ status: 550 })
  })

  it('a server that never greets is given up on after the timeout', async () => {
    const sockets = new Set<Socket>()
    const silent: TcpServer = createTcpServer((s) => void sockets.add(s))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as AddressInfo).port
    try {
      const started = Date.now()
      const err = await failure(createMailer(smtpConfig(`smtp://127.0.0.1:${port}`), { timeoutMs: 300 }))
      expect(err.code).toBe('service_unavailable')
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
    }
  })
})

async function freePort(): Promise<number> {
  const server = createTcpServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
