import { Redis } from 'ioredis'

/**
 * Opens one ioredis connection and waits until it is ready, so a wrong REDIS_URL fails at start-up
 * instead of on the first request. Throws Error (no AppError code) when Redis cannot be reached.
 */
export async function connectRedis(url: string, role: string, onError: (err: unknown) => void): Promise<Redis> {
  // A request must not hang through a long outage: one retry, then the command is rejected.
  const client = new Redis(url, { lazyConnect: true, connectionName: `plinth-${role}`, maxRetriesPerRequest: 1 })
  let lastError: unknown
  const remember = (err: unknown) => {
    lastError = err
  }
  client.on('error', remember)
  try {
    await client.connect()
  } catch (err) {
    client.disconnect()
    // ioredis rejects with a bare "Connection is closed"; the reason (ECONNREFUSED, auth…) came as an event.
    const reason = lastError ?? err
    throw new Error(`Cannot connect to Redis at ${redactUrl(url)}: ${describeError(reason)}`, { cause: err })
  }
  client.off('error', remember)
  // Without a listener ioredis prints every reconnect failure to stderr.
  client.on('error', onError)
  return client
}

/** Ends a connection, waiting for pending replies when it is up. Never throws. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return
  if (client.status !== 'ready') {
    client.disconnect()
    return
  }
  try {
    await client.quit()
  } catch {
    client.disconnect()
  }
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparseable URL)'
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
