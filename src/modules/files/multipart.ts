import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { PassThrough, type Readable } from 'node:stream'
import { AppError } from '../../lib/errors.js'

/** The file part of a multipart body, handed over while it streams. */
export interface MultipartFile {
  filename: string
  contentType: string
  /** The part's bytes; they arrive only while this is read, so read it to the end (or fail). */
  stream: Readable
}

export interface MultipartOptions {
  /** The one field that carries a file (`file`). */
  fileField: string
  /** Receives the file part; resolves once it has consumed the stream. */
  onFile(file: MultipartFile): Promise<void>
  /** Largest file part, in bytes (400 limit_exceeded past it, while streaming). */
  maxFileBytes: number
  /** Text fields: at most this many, each at most `maxFieldBytes`. */
  maxFields?: number
  maxFieldBytes?: number
}

export interface MultipartResult {
  fields: Record<string, string>
  /** What the file part held, measured while it streamed; null when the body had none. */
  file: { filename: string; contentType: string; sizeBytes: number; sha256: string } | null
}

/** The file part being streamed. */
interface Upload {
  pass: PassThrough
  hash: ReturnType<typeof createHash>
  size: number
  done: Promise<void>
  settled: boolean
  failure: unknown
  filename: string
  contentType: string
}

const CRLF = Buffer.from('\r\n')
const headerEnd = Buffer.from('\r\n\r\n')
const maxHeaderBytes = 16 * 1024

/** The boundary of a `multipart/form-data` Content-Type; throws unsupported_media_type for any other type. */
export function multipartBoundary(contentType: string | undefined): string {
  const type = contentType ?? ''
  if (!/^multipart\/form-data\s*(;|$)/i.test(type)) throw new AppError('unsupported_media_type', 'Send multipart/form-data')
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(type)
  const boundary = match?.[1] ?? match?.[2]
  if (!boundary) throw new AppError('invalid_request', 'The multipart Content-Type has no boundary')
  return boundary
}

function bad(message: string): AppError {
  // The unread rest of the body would poison a kept-alive connection.
  return new AppError('invalid_request', message, {}, { headers: { Connection: 'close' } })
}

/** `form-data; name="file"; filename="a.jpg"` → its parameters (quoted strings unescaped, RFC 5987 `filename*` decoded). */
function dispositionParams(value: string): Record<string, string> {
  const params: Record<string, string> = {}
  const pattern = /;\s*([\w*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (const m of value.matchAll(pattern)) {
    const key = m[1]!.toLowerCase()
    let v = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim()
    if (key.endsWith('*')) {
      const ext = /^([\w-]+)'[^']*'(.*)$/.exec(v)
      try {
        v = ext ? decodeURIComponent(ext[2]!) : v
      } catch {
        continue
      }
      params[key.slice(0, -1)] = v
    } else if (!(key in params)) params[key] = v
  }
  return params
}

function parseHeaders(block: string): { name: string; filename: string | null; contentType: string } {
  const headers = new Map<string, string>()
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  const disposition = headers.get('content-disposition')
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition)) throw bad('Every multipart part needs Content-Disposition: form-data')
  const params = dispositionParams(disposition)
  if (!params.name) throw bad('A multipart part has no name')
  return { name: params.name, filename: params.filename ?? null, contentType: headers.get('content-type') ?? 'application/octet-stream' }
}

/**
 * Reads a `multipart/form-data` body as it arrives: text fields are collected (small, bounded), the one file
 * part is streamed to `onFile` with backpressure, never held whole, while its size and SHA-256 are measured.
 * Throws unsupported_media_type, invalid_request (malformed, a second file, a field too long, a file in
 * another field), limit_exceeded (file too large), and whatever `onFile` throws.
 */
export async function readMultipart(source: AsyncIterable<Uint8Array>, contentType: string | undefined, options: MultipartOptions): Promise<MultipartResult> {
  const delimiter = Buffer.from(`\r\n--${multipartBoundary(contentType)}`)
  const maxFields = options.maxFields ?? 10
  const maxFieldBytes = options.maxFieldBytes ?? 4096
  const fields: Record<string, string> = {}
  let file: MultipartResult['file'] = null

  let state = 'preamble' as 'preamble' | 'delimiter' | 'headers' | 'body' | 'done'
  // A leading CRLF makes the first delimiter look like every other one.
  let buf: Buffer = Buffer.from(CRLF)
  let part: { name: string; field: Buffer[] | null; fieldBytes: number } | null = null
  let upload = null as Upload | null

  async function startPart(headers: ReturnType<typeof parseHeaders>): Promise<void> {
    if (headers.filename === null) {
      if (Object.keys(fields).length >= maxFields) throw bad(`At most ${maxFields} form fields`)
      part = { name: headers.name, field: [], fieldBytes: 0 }
      return
    }
    if (headers.name !== options.fileField) throw bad(`Send the file in the field "${options.fileField}"`)
    if (file !== null || upload !== null) throw bad(`Send exactly one file in "${options.fileField}"`)
    part = { name: headers.name, field: null, fieldBytes: 0 }
    const pass = new PassThrough({ highWaterMark: 256 * 1024 })
    // The consumer sees a failure through its reads; the event itself must not go unheard.
    pass.on('error', () => {})
    const started: Upload = {
      pass,
      hash: createHash('sha256'),
      size: 0,
      done: Promise.resolve(),
      settled: false,
      failure: undefined,
      filename: headers.filename,
      contentType: headers.contentType,
    }
    started.done = options.onFile({ filename: headers.filename, contentType: headers.contentType, stream: pass }).then(
      () => void (started.settled = true),
      (err: unknown) => {
        started.settled = true
        started.failure = err ?? new Error('multipart: the file consumer failed')
      },
    )
    upload = started
  }

  async function partData(data: Buffer): Promise<void> {
    if (data.length === 0 || !part) return
    if (part.field) {
      part.fieldBytes += data.length
      if (part.fieldBytes > maxFieldBytes) throw bad(`The form field "${part.name.slice(0, 60)}" is longer than ${maxFieldBytes} bytes`)
      part.field.push(Buffer.from(data))
      return
    }
    const u = upload!
    u.size += data.length
    if (u.size > options.maxFileBytes) {
      throw new AppError('limit_exceeded', `The file is larger than ${options.maxFileBytes} bytes`, { limit: options.maxFileBytes }, { headers: { Connection: 'close' } })
    }
    u.hash.update(data)
    // `data` is a view of the parser's buffer; nothing writes into that memory again, so no copy is needed.
    if (!u.pass.write(data)) await Promise.race([once(u.pass, 'drain'), u.done])
    if (u.settled) {
      if (u.failure !== undefined) throw u.failure
      throw new Error('multipart: the file consumer stopped reading early')
    }
  }

  async function endPart(): Promise<void> {
    if (!part) return
    if (part.field) fields[part.name] = Buffer.concat(part.field).toString('utf8')
    else {
      const u = upload!
      u.pass.end()
      await u.done
      if (u.failure !== undefined) throw u.failure
      file = { filename: u.filename, contentType: u.contentType, sizeBytes: u.size, sha256: u.hash.digest('hex') }
      upload = null
    }
    part = null
  }

  async function step(): Promise<boolean> {
    switch (state) {
      case 'preamble': {
        const at = buf.indexOf(delimiter)
        if (at === -1) {
          buf = buf.subarray(Math.max(0, buf.length - delimiter.length + 1))
          return false
        }
        buf = buf.subarray(at + delimiter.length)
        state = 'delimiter'
        return true
      }
      case 'delimiter': {
        if (buf.length < 2) return false
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'done'
          return false
        }
        const eol = buf.indexOf(CRLF)
        if (eol === -1) {
          if (buf.length > 256) throw bad('Malformed multipart body')
          return false
        }
        if (buf.subarray(0, eol).toString('latin1').trim() !== '') throw bad('Malformed multipart body')
        buf = buf.subarray(eol + 2)
        state = 'headers'
        return true
      }
      case 'headers': {
        const at = buf.subarray(0, 2).equals(CRLF) ? -2 : buf.indexOf(headerEnd)
        if (at === -1) {
          if (buf.length > maxHeaderBytes) throw bad('A multipart part has headers longer than 16 KB')
          return false
        }
        const block = at === -2 ? '' : buf.subarray(0, at).toString('utf8')
        buf = buf.subarray(at === -2 ? 2 : at + 4)
        await startPart(parseHeaders(block))
        state = 'body'
        return true
      }
      case 'body': {
        const at = buf.indexOf(delimiter)
        if (at === -1) {
          const safe = buf.length - delimiter.length + 1
          if (safe > 0) {
            await partData(buf.subarray(0, safe))
            buf = buf.subarray(safe)
          }
          return false
        }
        await partData(buf.subarray(0, at))
        buf = buf.subarray(at + delimiter.length)
        await endPart()
        state = 'delimiter'
        return true
      }
      case 'done':
        return false
    }
  }

  try {
    for await (const chunk of source) {
      if (state === 'done') continue // the epilogue is ignored, but read so the connection stays usable
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      buf = buf.length === 0 ? bytes : Buffer.concat([buf, bytes])
      while (await step());
    }
    if (state !== 'done') throw bad('The multipart body ended early')
    return { fields, file }
  } catch (err) {
    const u = upload
    if (u) {
      u.pass.destroy(err instanceof Error ? err : new Error('multipart failed'))
      await u.done
    }
    throw err
  }
}
