import { createTransport } from 'nodemailer'
import { Redis } from 'ioredis'
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

/** Redis, when REDIS_URL is set: one connection attempt (no retries) and a PING. */
export async function checkRedis(config: Config): Promise<CheckResult> {
  if (!config.redisUrl) {
    return ok('redis', 'not configured: caches, rate limits, realtime and jobs stay in this process (one instance)')
  }
  const at = `Redis at ${where(config.redisUrl, 6379)}`
  // Its own client, not the server's: one attempt, so a host that never answers cannot keep the process alive.
  const client = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: checkTimeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectionName: 'plinth-doctor',
  })
  let lastError: unknown
  client.on('error', (err) => {
    lastError = err
  })
  try {
    await withinTimeout(client.connect().then(() => client.ping()))
    return ok('redis', `${at}: answers PING`)
  } catch (err) {
    const text = `${String((err as Error)?.message)} ${String((lastError as Error | undefined)?.message)}`
    const reason = /NOAUTH|WRONGPASS|invalid password|invalid username-password/i.test(text)
      ? 'the password was refused (check REDIS_URL)'
      : /RESP type|Protocol error/i.test(text)
        ? 'what answers there does not speak Redis (the wrong port?)'
        : describeNetworkError(lastError ?? err)
    return fail('redis', `cannot connect to ${at}: ${reason}`)
  } finally {
    client.disconnect()
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
