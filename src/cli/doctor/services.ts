import { createTransport } from 'nodemailer'
import { closeRedis, connectRedis } from '../../lib/redis/connect-redis.js'
import type { Config } from '../../config.js'
import {
  checkTimeoutMs,
  describeNetworkError,
  fail,
  ok,
  warn,
  where,
  withinTimeout,
  type CheckResult,
} from './check.js'

/** Redis, when REDIS_URL is set: a connection and a PING. */
export async function checkRedis(config: Config): Promise<CheckResult> {
  if (!config.redisUrl) {
    return ok('redis', 'not configured: caches, rate limits, realtime and jobs stay in this process (one instance)')
  }
  const at = `Redis at ${where(config.redisUrl, 6379)}`
  let lastError: unknown
  try {
    const client = await withinTimeout(
      connectRedis(config.redisUrl, 'doctor', (err) => {
        lastError = err
      }),
    )
    try {
      await withinTimeout(client.ping())
    } finally {
      await closeRedis(client)
    }
    return ok('redis', `${at}: answers PING`)
  } catch (err) {
    // connectRedis's own message carries the URL (password hidden); only the cause is shown here.
    const text = `${String((err as Error)?.message)} ${String((lastError as Error | undefined)?.message)}`
    const reason = /NOAUTH|WRONGPASS|invalid password/i.test(text)
      ? 'the password was refused (check REDIS_URL)'
      : describeNetworkError(lastError ?? err)
    return fail('redis', `cannot connect to ${at}: ${reason}`)
  }
}

/** Email: SMTP (connect, greeting, login), or the REST API's host answering over HTTP. */
export async function checkEmail(config: Config): Promise<CheckResult> {
  const { smtpUrl, apiUrl } = config.email
  if (smtpUrl) return checkSmtp(smtpUrl)
  if (apiUrl) {
    const at = `the email API at ${where(apiUrl, new URL(apiUrl).protocol === 'https:' ? 443 : 80)}`
    try {
      const reply = await withinTimeout(fetch(apiUrl, { method: 'HEAD', signal: AbortSignal.timeout(checkTimeoutMs) }))
      return ok('email', `${at} answers (HTTP ${reply.status}); a message is not sent`)
    } catch (err) {
      return fail('email', `cannot reach ${at}: ${describeNetworkError(err)}`)
    }
  }
  return warn(
    'email',
    'no channel: sign-up confirmations, password resets and send_email are not delivered (set SMTP_URL or EMAIL_API_URL)',
  )
}

async function checkSmtp(url: string): Promise<CheckResult> {
  const at = `SMTP at ${where(url, new URL(url).protocol === 'smtps:' ? 465 : 587)}`
  const transport = createTransport({
    url,
    connectionTimeout: checkTimeoutMs,
    greetingTimeout: checkTimeoutMs,
    socketTimeout: checkTimeoutMs,
  })
  try {
    await withinTimeout(transport.verify(), checkTimeoutMs * 2)
    return ok('email', `${at}: connected${new URL(url).username ? ' and logged in' : ''}; a message is not sent`)
  } catch (err) {
    // nodemailer's messages can quote the server's replies; only what it means is shown.
    const code = (err as { code?: string }).code
    const reason =
      code === 'EAUTH'
        ? 'the server refused the login (check the user and password in SMTP_URL)'
        : code === 'ETLS'
          ? 'TLS failed (smtps:// for port 465, smtp:// with STARTTLS otherwise)'
          : describeNetworkError(err)
    return fail('email', `cannot use ${at}: ${reason}`)
  } finally {
    transport.close()
  }
}
