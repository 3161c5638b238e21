import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream'
import { urlToHttpOptions } from 'node:url'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { OutboundError } from './errors.js'
import type { SocketLookup } from './lookup.js'
import type { Hop } from './redirect.js'

export interface HopContext {
  /** The lookup the socket resolves the host with (the guarded one unless private networks are allowed). */
  lookup: SocketLookup | undefined
  /** Aborts the hop, its connection and the body being read. */
  signal: AbortSignal
  connectTimeoutMs: number
}

/** A response whose head has arrived; the body is still on the socket. */
export interface OpenHop {
  req: ClientRequest
  res: IncomingMessage
}

/**
 * Sends one request and waits for the response head. A fresh connection each time (`agent: false`): the
 * socket resolves the host through `ctx.lookup` and connects to the addresses that lookup answered, so
 * the address checked is the address connected to. TLS gets the host name (SNI, certificate check), never
 * the address. The connect timeout covers resolving, connecting and the TLS handshake.
 */
export function openHop(hop: Hop, ctx: HopContext): Promise<OpenHop> {
  return new Promise((resolve, reject) => {
    const https = hop.url.protocol === 'https:'
    const { hostname, port, path } = urlToHttpOptions(hop.url)
    const headers: Record<string, string> = { ...hop.headers }
    if (hop.body !== null) headers['content-length'] = String(hop.body.byteLength)
    const options = {
      hostname,
      port,
      path,
      method: hop.method,
      headers,
      agent: false,
      signal: ctx.signal,
      ...(ctx.lookup ? { lookup: ctx.lookup } : {}),
    }
    const req = https ? httpsRequest(options) : httpRequest(options)
    const connectTimer = setTimeout(
      () =>
        req.destroy(
          new OutboundError('timeout', `Could not connect to ${hop.url.hostname} within ${ctx.connectTimeoutMs} ms`),
        ),
      ctx.connectTimeoutMs,
    )
    req.once('socket', (socket) => socket.once(https ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer)))
    req.on('error', (err) => {
      clearTimeout(connectTimer)
      reject(err)
    })
    req.once('response', (res) => {
      clearTimeout(connectTimer)
      resolve({ req, res })
    })
    req.end(hop.body ?? undefined)
  })
}

/**
 * Reads the body of an open hop, decoded (gzip, deflate, br), refusing it once it is over `maxBytes`:
 * at once when Content-Length says so, else as soon as the bytes counted pass the limit (the decoded
 * bytes, so a small compressed body cannot expand past it). Stops the connection on refusal.
 * @throws OutboundError `too_large`; the socket's own errors otherwise.
 */
export async function readBody({ req, res }: OpenHop, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.destroy()
    throw tooLarge(maxBytes)
  }
  const decoder = decoderFor(res.headers['content-encoding'])
  const source: Readable = decoder ? pipeline(res, decoder, () => {}) : res
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.byteLength
      if (size > maxBytes) throw tooLarge(maxBytes)
      chunks.push(chunk)
    }
  } finally {
    // Ends the connection whatever happened: the body was read whole, or nothing more of it is wanted.
    req.destroy()
  }
  return Buffer.concat(chunks, size)
}

function tooLarge(maxBytes: number): OutboundError {
  return new OutboundError('too_large', `The response body is larger than ${maxBytes} bytes`)
}

/** The decoder for a Content-Encoding the client asked for; an unknown or stacked one is passed on as it is. */
function decoderFor(encoding: string | undefined) {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip()
    case 'deflate':
      return createInflate()
    case 'br':
      return createBrotliDecompress()
    default:
      return null
  }
}
