import type { IncomingMessage } from 'node:http'
import { AppError, isAppError } from '../errors.js'

/** The most of an unread body read and thrown away so a refusal can keep the connection (and be heard). */
export const drainLimitBytes = 1024 * 1024
/** How long the rest of a body may take to arrive before the connection is closed instead. */
export const drainTimeoutMs = 2_000

/**
 * Reads and discards what is left of a request body, up to `maxBytes` (known lengths over it are not tried)
 * and `timeoutMs`. Resolves true when the body ended, false when it would not (too long, too slow, broken).
 */
export function drainUnread(
  incoming: IncomingMessage,
  maxBytes = drainLimitBytes,
  timeoutMs = drainTimeoutMs,
): Promise<boolean> {
  if (incoming.complete) return Promise.resolve(true)
  if (incoming.destroyed || incoming.readableAborted) return Promise.resolve(false)
  const declared = incoming.headers['content-length']
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) return Promise.resolve(false)
  return new Promise((resolve) => {
    let seen = 0
    const done = (ended: boolean) => {
      clearTimeout(timer)
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('error', onError)
      incoming.off('close', onClose)
      if (!ended) incoming.pause()
      resolve(ended)
    }
    const onData = (chunk: Buffer) => {
      seen += chunk.length
      if (seen > maxBytes) done(false)
    }
    const onEnd = () => done(true)
    const onError = () => done(false)
    const onClose = () => done(incoming.complete)
    const timer = setTimeout(() => done(false), timeoutMs)
    timer.unref()
    incoming.on('data', onData)
    incoming.once('end', onEnd)
    incoming.once('error', onError)
    incoming.once('close', onClose)
    incoming.resume()
  })
}

/**
 * The refusal of a streamed upload answered before its whole body was read. A short rest is read first, so
 * the answer goes out on a connection the client is done writing to (a server that closes with unread bytes
 * resets the connection, and clients such as Node 26's fetch then report the write's EPIPE instead of the
 * answer). A long or stalled rest is not waited for: the answer says `Connection: close`, since the unread
 * bytes would poison a kept-alive connection. A client that hung up mid-upload is its own failure, not a
 * server fault (nothing was kept either way).
 */
export async function refusalBeforeBodyEnd(err: unknown, incoming: IncomingMessage | undefined): Promise<unknown> {
  if (!incoming || incoming.complete) return err
  if (!isAppError(err)) {
    if (!incoming.destroyed && !incoming.readableAborted) return err
    return new AppError(
      'invalid_request',
      'The upload was interrupted before its end; nothing was stored',
      {},
      { headers: { Connection: 'close' } },
    )
  }
  const drained = await drainUnread(incoming)
  const { Connection: _closing, ...headers } = err.headers ?? {}
  return new AppError(err.code, err.message, err.details, {
    cause: err.cause,
    headers: drained ? headers : { ...headers, Connection: 'close' },
  })
}
