/** One line of `plinth doctor`: what was checked, how it went, and in plain words what is wrong and what to do. */
export interface CheckResult {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'FAIL'
  readonly message: string
}

export const ok = (name: string, message: string): CheckResult => ({ name, status: 'ok', message })
export const warn = (name: string, message: string): CheckResult => ({ name, status: 'warn', message })
export const fail = (name: string, message: string): CheckResult => ({ name, status: 'FAIL', message })

/** How long any one network check may take before it counts as no answer. */
export const checkTimeoutMs = 5000

/** Rejects with `no answer within 5 s` when `promise` takes longer than the check's time. */
export async function withinTimeout<T>(promise: Promise<T>, ms = checkTimeoutMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Where a URL points, without its credentials: `host:port` (and the path when asked). */
export function where(url: string, defaultPort: number, withPath = false): string {
  try {
    const parsed = new URL(url)
    const path = withPath && parsed.pathname !== '/' ? parsed.pathname : ''
    return `${parsed.hostname}:${parsed.port || defaultPort}${path}`
  } catch {
    return '(not a URL)'
  }
}

/** A network error in plain words: the cause an operator can act on, never the driver's raw text with its URL. */
export function describeNetworkError(err: unknown): string {
  const code = (err as { code?: unknown }).code
  const codes: Record<string, string> = {
    ECONNREFUSED: 'connection refused (is it running, and listening on that address and port?)',
    ENOTFOUND: 'the host name does not resolve (check the host in the URL)',
    EAI_AGAIN: 'the host name could not be resolved just now (DNS)',
    ETIMEDOUT: `no answer within ${checkTimeoutMs / 1000} s (a firewall, or the wrong host or port?)`,
    ECONNRESET: 'the connection was reset (TLS expected, or a proxy in the way?)',
    EHOSTUNREACH: 'the host is unreachable from here',
    ENETUNREACH: 'the network is unreachable from here',
    CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
    DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed",
  }
  if (typeof code === 'string' && codes[code]) return codes[code]
  // nodemailer keeps the socket's code as originalCode; ioredis's wrapper only in its message text.
  const original = (err as { originalCode?: unknown }).originalCode
  if (typeof original === 'string' && codes[original]) return codes[original]
  const named = /\b(E[A-Z_]+|CERT_HAS_EXPIRED|DEPTH_ZERO_SELF_SIGNED_CERT)\b/.exec(
    String((err as Error)?.message ?? ''),
  )
  if (named && codes[named[1]!]) return codes[named[1]!]!
  // Nested causes (AggregateError of several addresses, fetch's TypeError) carry the code below.
  const inner = (err as { cause?: unknown; errors?: unknown[] }).cause ?? (err as { errors?: unknown[] }).errors?.[0]
  if (inner && inner !== err) return describeNetworkError(inner)
  return typeof code === 'string' ? `failed (${code})` : 'failed'
}
