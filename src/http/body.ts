import type { IncomingMessage } from 'node:http'
import { jsonTextNestsBeyond, jsonValueCount, maxJsonNesting, maxJsonValues } from '../lib/json-bounds.js'
import type { MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { AppError } from '../lib/errors.js'
import { refuseProtoKey, type AppEnv } from '../lib/http/index.js'

const jsonTypes = /^application\/(?:[\w.+-]*\+)?json\b|^application\/x-ndjson\b/i
const ndjsonType = /^application\/x-ndjson\b/i

function tooLarge(maxSize: number): AppError {
  // The unread rest of the body would poison a kept-alive connection: close it after the answer.
  return new AppError(
    'payload_too_large',
    `Request body exceeds ${maxSize} bytes`,
    { limit: maxSize },
    { headers: { Connection: 'close' } },
  )
}

/** Reads a Node request body into memory, refusing it once it passes `maxSize` bytes. */
function readAll(incoming: IncomingMessage, maxSize: number): Promise<string> {
  // Plain listeners: an async iterator over the stream costs more than a small body itself.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxSize) return void chunks.push(chunk)
      cleanup()
      incoming.resume() // drain the rest; the connection closes after the answer
      reject(tooLarge(maxSize))
    }
    const onEnd = () => {
      cleanup()
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'))
    }
    const onError = (err: Error) => {
      cleanup()
      reject(err)
    }
    // A client that goes away mid-body ends the request with close and no end.
    const onClose = () => onError(new Error('request aborted'))
    const cleanup = () => {
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('error', onError)
      incoming.off('close', onClose)
    }
    incoming.on('data', onData)
    incoming.on('end', onEnd)
    incoming.on('error', onError)
    incoming.on('close', onClose)
  })
}

/**
 * Bounds every request body (413 over `maxSize`, by Content-Length or while streaming). Under Node, a JSON
 * body is read straight from the socket into Hono's body cache, so neither validation nor handlers build
 * a WHATWG Request (its stream, AbortController and Headers cost more than a small request itself).
 * Other bodies (uploads) are left to stream; their size is checked from Content-Length here and by their
 * routes while they read. A JSON or NDJSON body with a `__proto__` key is refused here (400
 * invalid_request), for every route. Throws payload_too_large, invalid_request.
 */
export function limitBody(maxSize: number): MiddlewareHandler<AppEnv> {
  const fallback = bodyLimit({
    maxSize,
    onError: () => {
      throw tooLarge(maxSize)
    },
  })
  return async (c, next) => {
    const incoming = c.env?.incoming
    if (!incoming) return fallback(c, next)
    const declared = incoming.headers['content-length']
    if (declared !== undefined && Number(declared) > maxSize) throw tooLarge(maxSize)
    const type = incoming.headers['content-type']
    if (type !== undefined && jsonTypes.test(type)) {
      const text = await readAll(incoming, maxSize)
      // Every JSON body passes here, whichever route reads it: one place refuses `__proto__` keys.
      refuseProtoKey(text, ndjsonType.test(type))
      // Parsed JSON can take 40× its text in memory (lib/json-bounds): a plain JSON body holds at most a
      // million values. NDJSON is parsed a line at a time by its importers.
      if (!ndjsonType.test(type) && text.length >= 2 * maxJsonValues && jsonValueCount(text) > maxJsonValues) {
        throw new AppError('payload_too_large', `Request body holds more than ${maxJsonValues} JSON values`, {
          limit: maxJsonValues,
        })
      }
      // Deeper JSON parses, but writing it back (a run's trigger, a record's field) overflows the stack.
      if (jsonTextNestsBeyond(text)) {
        throw new AppError('invalid_request', `Request body nests deeper than ${maxJsonNesting} levels`, {
          limit: maxJsonNesting,
        })
      }
      // Hono keeps body promises in this cache (its type says the value); json() awaits the text.
      c.req.bodyCache.text = Promise.resolve(text) as unknown as string
    } else if (declared === undefined && incoming.headers['transfer-encoding'] !== undefined) {
      return fallback(c, next)
    }
    return next()
  }
}
