import type { IncomingMessage } from 'node:http'
import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { AppError } from '../lib/errors.js'
import type { AppEnv } from '../lib/http/index.js'

const jsonTypes = /^application\/(?:[\w.+-]*\+)?json\b|^application\/x-ndjson\b/i

function tooLarge(maxSize: number): AppError {
  // The unread rest of the body would poison a kept-alive connection: close it after the answer.
  return new AppError('payload_too_large', `Request body exceeds ${maxSize} bytes`, { limit: maxSize }, { headers: { Connection: 'close' } })
}

/** Reads a Node request body into memory, refusing it once it passes `maxSize` bytes. */
async function readAll(incoming: IncomingMessage, maxSize: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > maxSize) throw tooLarge(maxSize)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size).toString('utf8')
}

/**
 * Bounds every request body (413 over `maxSize`, by Content-Length or while streaming). Under Node, a JSON
 * body is read straight from the socket into Hono's body cache, so neither validation nor handlers build
 * a WHATWG Request (its stream, AbortController and Headers cost more than a small request itself).
 * Other bodies (uploads) are left to stream; their size is checked from Content-Length here and by their
 * routes while they read.
 */
export function limitBody(maxSize: number): MiddlewareHandler<AppEnv> {
  const fallback = bodyLimit({ maxSize, onError: () => { throw tooLarge(maxSize) } })
  return async (c, next) => {
    const incoming = c.env?.incoming
    if (!incoming) return fallback(c, next)
    const declared = incoming.headers['content-length']
    if (declared !== undefined && Number(declared) > maxSize) throw tooLarge(maxSize)
    const type = incoming.headers['content-type']
    if (type !== undefined && jsonTypes.test(type)) {
      // Hono keeps body promises in this cache (its type says the value); json() awaits the text.
      c.req.bodyCache.text = Promise.resolve(await readAll(incoming, maxSize)) as unknown as string
    } else if (declared === undefined && incoming.headers['transfer-encoding'] !== undefined) {
      return fallback(c, next)
    }
    return next()
  }
}
