import { SMTPServer } from 'smtp-server'

export interface Mail {
  from: string
  to: string[]
  raw: string
  subject: string
  /** The decoded text body (quoted-printable soft breaks undone). */
  text: string
}

export interface Mailbox {
  /** `smtp://127.0.0.1:<port>`: pass it as SMTP_URL. */
  url: string
  messages: Mail[]
  /** Resolves with the first message (received so far or later) that matches. */
  waitFor(predicate: (mail: Mail) => boolean, timeoutMs?: number): Promise<Mail>
  close(): Promise<void>
}

/** A real SMTP server on a free port that keeps what it receives. */
export async function startMailbox(): Promise<Mailbox> {
  const messages: Mail[] = []
  const waiters: { predicate: (m: Mail) => boolean; resolve: (m: Mail) => void }[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const [head = '', ...rest] = raw.split(/\r?\n\r?\n/)
        const subject = /^Subject: (.*)$/im.exec(head)?.[1]?.trim() ?? ''
        const body = rest.join('\n\n')
        const text = /quoted-printable/i.test(head) ? decodeQuotedPrintable(body) : body
        const mail: Mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject,
          text,
        }
        messages.push(mail)
        for (const w of [...waiters]) {
          if (w.predicate(mail)) {
            waiters.splice(waiters.indexOf(w), 1)
            w.resolve(mail)
          }
        }
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate)
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve }
        waiters.push(waiter)
        setTimeout(() => {
          const i = waiters.indexOf(waiter)
          if (i >= 0) {
            waiters.splice(i, 1)
            reject(new Error('No matching mail arrived'))
          }
        }, timeoutMs)
      })
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function decodeQuotedPrintable(body: string): string {
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}
