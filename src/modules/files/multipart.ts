import { createHash } from 'node:crypto'
import { Readable, Transform } from 'node:stream'
import busboy from 'busboy'
import { AppError } from '../../lib/errors.js'

/** The file part of a multipart body, handed over while it streams. */
export interface MultipartFile {
  filename: string
  contentType: string
  /** The part's bytes; they arrive only while this is read, so read it to the end (or fail). */
  stream: Readable
  /**
   * Narrows the largest size of this part below `maxFileBytes` (a container's ceiling, known once the
   * fields before the file are read): past it the body fails with limit_exceeded while it streams, as past
   * the route's own ceiling, also when bytes past it were already measured.
   */
  limit(maxBytes: number): void
}

export interface MultipartOptions {
  /** The one field that carries a file (`file`). */
  fileField: string
  /** Receives the file part; resolves once it has consumed the stream. */
  /** `fields`: the text fields sent before the file part. */
  onFile(file: MultipartFile, fields: Readonly<Record<string, string>>): Promise<void>
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

/** The boundary of a `multipart/form-data` Content-Type; throws unsupported_media_type for any other type. */
export function multipartBoundary(contentType: string | undefined): string {
  const type = contentType ?? ''
  if (!/^multipart\/form-data\s*(;|$)/i.test(type))
    throw new AppError('unsupported_media_type', 'Send multipart/form-data')
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(type)
  const boundary = match?.[1] ?? match?.[2]
  if (!boundary) throw new AppError('invalid_request', 'The multipart Content-Type has no boundary')
  return boundary
}

function tooLarge(limit: number): AppError {
  // Answered before the body is read to its end: the connection cannot carry another request.
  return new AppError(
    'limit_exceeded',
    `The file is larger than ${limit} bytes`,
    { limit },
    { headers: { Connection: 'close' } },
  )
}

function bad(message: string): AppError {
  // The unread rest of the body would poison a kept-alive connection.
  return new AppError('invalid_request', message, {}, { headers: { Connection: 'close' } })
}

/**
 * Reads a `multipart/form-data` body with busboy as it arrives: text fields are collected (small, bounded),
 * the one file part is streamed to `onFile` with backpressure, never held whole, while its size and SHA-256
 * are measured. Parts that are not form-data are skipped. Never destroys `source` (its socket must still
 * carry the answer). Throws unsupported_media_type, invalid_request (malformed or cut short, a second file,
 * a file in another field, a part without a name, too many or too long fields), limit_exceeded (file too
 * large), and whatever `onFile` throws.
 */
export function readMultipart(
  source: AsyncIterable<Uint8Array>,
  contentType: string | undefined,
  options: MultipartOptions,
): Promise<MultipartResult> {
  multipartBoundary(contentType)
  const maxFields = options.maxFields ?? 10
  const maxFieldBytes = options.maxFieldBytes ?? 4096
  const input = source instanceof Readable ? source : Readable.from(source)
  // One past each limit: busboy flags a part that reaches its limit, and reaching it exactly is allowed.
  const parser = busboy({
    headers: { 'content-type': contentType },
    defParamCharset: 'utf8',
    limits: {
      fileSize: options.maxFileBytes + 1,
      files: 1,
      fields: maxFields,
      fieldSize: maxFieldBytes + 1,
      parts: maxFields + 1,
      headerPairs: 20,
    },
  })

  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {}
    let file: MultipartResult['file'] = null
    let meter: Transform | null = null
    let consumer: Promise<void> = Promise.resolve()
    let failure: unknown = null
    let finished = false

    function finish(): void {
      if (finished) return
      finished = true
      // The consumer has let go of the stream (stored it, or failed) before the caller hears the outcome.
      void consumer.then(() => (failure === null ? resolve({ fields, file }) : reject(failure)))
    }

    function fail(err: unknown): void {
      if (failure !== null) return
      failure = err
      input.unpipe(parser)
      meter?.destroy(err instanceof Error ? err : new Error('multipart failed'))
      // Not from inside busboy's own callbacks (fail runs in them): it carries on with state a synchronous
      // destroy has cleared, and throws where no listener can catch it. Its 'error' on destroy is heard.
      process.nextTick(() => parser.destroy())
      finish()
    }

    parser.on('field', (name: string | undefined, value: string, info: busboy.FieldInfo) => {
      if (name === undefined || name === '') return fail(bad('A multipart part has no name'))
      if (info.valueTruncated)
        return fail(bad(`The form field "${name.slice(0, 60)}" is longer than ${maxFieldBytes} bytes`))
      fields[name] = value
    })

    parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
      if (name !== options.fileField) {
        // Destroying the parser ends this stream with an error: heard here, or it would be uncaught.
        stream.on('error', () => {})
        stream.resume()
        return fail(bad(`Send the file in the field "${options.fileField}"`))
      }
      const hash = createHash('sha256')
      let size = 0
      let cap: number | null = null
      const measured = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length
          if (cap !== null && size > cap) {
            const err = tooLarge(cap)
            done(err)
            return fail(err)
          }
          hash.update(chunk)
          done(null, chunk)
        },
        // After the last chunk went through (the source's own 'end' can come while chunks still wait in
        // this transform's buffer for a slow consumer): only then are the size and the digest final.
        flush(done) {
          if (failure === null)
            file = {
              filename: info.filename ?? '',
              contentType: info.mimeType,
              sizeBytes: size,
              sha256: hash.digest('hex'),
            }
          done()
        },
      })
      // The consumer sees a failure through its reads; the event itself must not go unheard.
      measured.on('error', () => {})
      meter = measured
      stream.on('limit', () => fail(tooLarge(options.maxFileBytes)))
      stream.on('error', (err: Error) => fail(bad(`Malformed multipart body: ${err.message}`)))
      stream.pipe(measured)
      const limit = (maxBytes: number): void => {
        if (maxBytes >= options.maxFileBytes) return
        cap = maxBytes
        if (size > cap) {
          const err = tooLarge(cap)
          measured.destroy(err)
          fail(err)
        }
      }
      consumer = options
        .onFile({ filename: info.filename ?? '', contentType: info.mimeType, stream: measured, limit }, { ...fields })
        .catch((err: unknown) => fail(err ?? new Error('multipart: the file consumer failed')))
    })

    parser.on('filesLimit', () => fail(bad(`Send exactly one file in "${options.fileField}"`)))
    parser.on('fieldsLimit', () => fail(bad(`At most ${maxFields} form fields`)))
    parser.on('partsLimit', () => fail(bad(`At most ${maxFields + 1} parts`)))
    parser.on('error', (err: Error) =>
      fail(
        bad(
          err.message === 'Unexpected end of form'
            ? 'The multipart body ended early'
            : `Malformed multipart body: ${err.message}`,
        ),
      ),
    )
    parser.on('close', finish)
    input.on('error', (err: Error) => fail(bad(`The upload was interrupted: ${err.message}`)))
    input.pipe(parser)
  })
}
