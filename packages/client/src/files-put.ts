import { errorFor, NetworkError, PlinthError } from './errors.js'

/** What an upload can send: bytes in memory, a Blob or File (Node: `fs.openAsBlob`), or a stream of known size. */
export type UploadSource =
  | Blob
  | ArrayBuffer
  | ArrayBufferView
  | string
  | { stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>; size: number }

export interface UploadProgress {
  /** Bytes handed to the network so far. */
  loaded: number
  /** The whole size. */
  total: number
}

interface PutOptions {
  contentType: string
  onProgress?: ((progress: UploadProgress) => void) | undefined
  signal?: AbortSignal | undefined
  fetch: typeof fetch
}

/** The size of a source, known before it is sent (the upload token asks for it). */
export function sizeOf(source: UploadSource): number {
  if (typeof source === 'string') return new TextEncoder().encode(source).byteLength
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source.byteLength
  if (typeof Blob !== 'undefined' && source instanceof Blob) return source.size
  return (source as { size: number }).size
}

const chunkBytes = 64 * 1024

/**
 * PUTs the bytes to a presigned URL, without the client's credential (the signature is the credential; S3
 * refuses a second one). With onProgress: in a browser, XMLHttpRequest (fetch reports no upload progress
 * there, and streaming request bodies need HTTP/2 and are not in every browser); elsewhere (Node), fetch
 * with a body stream that counts each chunk as fetch pulls it, and the length declared up front.
 */
export async function putWithProgress(url: string, source: UploadSource, options: PutOptions): Promise<void> {
  const total = sizeOf(source)
  const xhr = (globalThis as { XMLHttpRequest?: new () => XhrLike }).XMLHttpRequest
  if (options.onProgress && xhr && !isStreamSource(source)) return putByXhr(xhr, url, source, total, options)
  const body = options.onProgress || isStreamSource(source) ? countingStream(source, total, options.onProgress) : source
  let res: Response
  try {
    res = await options.fetch(url, {
      method: 'PUT',
      headers: { 'content-type': options.contentType, 'content-length': String(total) },
      body: body as RequestInit['body'],
      signal: options.signal,
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit)
  } catch (err) {
    if (err instanceof PlinthError) throw err
    throw networkError(err)
  }
  if (!res.ok) throw errorOfAnswer(res.status, await res.text())
  await res.body?.cancel()
}

function isStreamSource(source: UploadSource): source is { stream: ReadableStream<Uint8Array>; size: number } {
  if (typeof Blob !== 'undefined' && source instanceof Blob) return false
  return typeof source === 'object' && source !== null && 'stream' in source
}

/** A body stream over the source in 64 KiB chunks, reporting each chunk once fetch has taken it. */
function countingStream(
  source: UploadSource,
  total: number,
  onProgress: ((progress: UploadProgress) => void) | undefined,
): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Uint8Array> | undefined
  let loaded = 0
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= chunksOf(source)[Symbol.asyncIterator]()
        const next = await chunks.next()
        if (next.done) {
          if (loaded !== total)
            controller.error(new Error(`The source gave ${loaded} bytes, not the ${total} announced`))
          else controller.close()
          return
        }
        controller.enqueue(next.value)
        loaded += next.value.byteLength
        onProgress?.({ loaded: Math.min(loaded, total), total })
      },
      async cancel(reason) {
        await chunks?.return?.(reason)
      },
    },
    // No read-ahead: a chunk is produced only when fetch asks for it, so `loaded` follows the network.
    { highWaterMark: 0 },
  )
}

async function* chunksOf(source: UploadSource): AsyncIterable<Uint8Array> {
  if (isStreamSource(source)) {
    const stream = source.stream as AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>
    if (Symbol.asyncIterator in stream) {
      for await (const chunk of stream as AsyncIterable<Uint8Array>) yield* slices(chunk)
      return
    }
    const reader = (stream as ReadableStream<Uint8Array>).getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        yield* slices(value)
      }
    } finally {
      reader.releaseLock()
    }
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    // Blob slices are read one at a time: a file on disk (openAsBlob) is never held in memory whole.
    for (let at = 0; at < source.size; at += chunkBytes) {
      yield new Uint8Array(await source.slice(at, at + chunkBytes).arrayBuffer())
    }
    return
  }
  yield* slices(bytesOf(source as ArrayBuffer | ArrayBufferView | string))
}

function* slices(bytes: Uint8Array): Iterable<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes)
}

function bytesOf(source: ArrayBuffer | ArrayBufferView | string): Uint8Array {
  if (typeof source === 'string') return new TextEncoder().encode(source)
  if (source instanceof ArrayBuffer) return new Uint8Array(source)
  return new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
}

interface XhrLike {
  open(method: string, url: string): void
  setRequestHeader(name: string, value: string): void
  send(body: unknown): void
  abort(): void
  readonly status: number
  readonly responseText: string
  upload: { onprogress: ((event: { loaded: number }) => void) | null }
  onload: (() => void) | null
  onerror: (() => void) | null
  onabort: (() => void) | null
}

function putByXhr(
  Xhr: new () => XhrLike,
  url: string,
  source: UploadSource,
  total: number,
  options: PutOptions,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = new Xhr()
    request.open('PUT', url)
    request.setRequestHeader('content-type', options.contentType)
    let reported = -1
    const report = (loaded: number) => {
      if (loaded <= reported) return
      reported = loaded
      options.onProgress?.({ loaded, total })
    }
    request.upload.onprogress = (event) => report(Math.min(event.loaded, total))
    request.onload = () => {
      if (request.status < 200 || request.status >= 300)
        return reject(errorOfAnswer(request.status, request.responseText))
      // A browser may skip the last progress event of a small body: the promised last call comes here.
      report(total)
      resolve()
    }
    request.onerror = () => reject(new NetworkError(null, 'unreachable', `PUT upload URL: the request failed`))
    request.onabort = () => reject(new NetworkError(null, 'aborted', 'PUT upload URL: aborted'))
    options.signal?.addEventListener('abort', () => request.abort(), { once: true })
    request.send(source)
  })
}

/** An answer of the storage URL as an error: Plinth's envelope (local storage), or the store's XML (S3). */
export function errorOfAnswer(status: number, text: string): PlinthError {
  try {
    const envelope = JSON.parse(text) as { error?: unknown; message?: unknown; details?: unknown }
    if (typeof envelope.error === 'string') {
      const details = envelope.details && typeof envelope.details === 'object' ? envelope.details : {}
      return errorFor(
        status,
        envelope.error,
        String(envelope.message ?? envelope.error),
        details as Record<string, unknown>,
      )
    }
  } catch {
    // not JSON: an S3 store's XML error
  }
  const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1]
  return errorFor(status, code ?? `http_${status}`, `The storage URL answered ${status}${code ? ` ${code}` : ''}`, {})
}

function networkError(err: unknown): NetworkError {
  const aborted = err instanceof Error && err.name === 'AbortError'
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))
  return new NetworkError(null, aborted ? 'aborted' : 'unreachable', `PUT upload URL: ${why}`)
}
