import { AppError } from '../errors.js'
import type { Logger } from '../log.js'
import type { MailChannel } from './types.js'

/** The rest_api channel: a JSON POST to the provider with a bearer key. Throws nothing until send. */
export function createRestApiChannel(apiUrl: string, apiKey: string, from: string, log?: Logger): MailChannel {
  return {
    async send(message, signal) {
      const { to, subject, text, html, replyTo } = message
      let res: Response
      try {
        res = await fetch(apiUrl, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify({ from: message.from ?? from, to, subject, text, html, replyTo }),
          signal,
          // A mail API has no reason to redirect; following one would resend the key elsewhere.
          redirect: 'error',
        })
      } catch (err) {
        // fetch's own messages can quote the URL, which may carry credentials; only the kind is logged.
        log?.warn({ channel: 'rest_api', code: failureKind(err), status: null }, 'email not sent')
        throw new AppError('service_unavailable', 'Email provider could not be reached', { status: null })
      }
      if (!res.ok) {
        await res.body?.cancel()
        log?.warn({ channel: 'rest_api', status: res.status }, 'email not sent')
        throw new AppError('service_unavailable', 'Email provider refused the message', { status: res.status })
      }
      return { messageId: await readMessageId(res), accepted: true }
    },
    async close() {},
  }
}

// Providers name the id differently; anything unreadable still counts as sent, since the 2xx said so.
async function readMessageId(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as Record<string, unknown> | null
    const id = body?.id ?? body?.messageId ?? body?.message_id
    return typeof id === 'string' ? id : ''
  } catch {
    return ''
  }
}

function failureKind(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return err.name
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code
  return typeof code === 'string' ? code : 'network'
}
