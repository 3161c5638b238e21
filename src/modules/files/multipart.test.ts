import { createHash, randomBytes } from 'node:crypto'
import { setImmediate as tick } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { isAppError } from '../../lib/errors.js'
import { multipartBoundary, readMultipart, type MultipartOptions } from './multipart.js'

const boundary = '----plinthBoundary7MA4YWxk'
const type = `multipart/form-data; boundary=${boundary}`

function body(
  parts: { name: string; filename?: string; type?: string; data: string | Buffer }[],
  options: { preamble?: string; epilogue?: string; end?: boolean } = {},
): Buffer {
  const chunks: Buffer[] = [Buffer.from(options.preamble ?? '')]
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename.replaceAll('"', '\\"')}"` : ''}`
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`
    chunks.push(Buffer.from(head), Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data), Buffer.from('\r\n'))
  }
  if (options.end !== false) chunks.push(Buffer.from(`--${boundary}--\r\n${options.epilogue ?? ''}`))
  return Buffer.concat(chunks)
}

/** The body cut into pieces of `size` bytes, as a socket might deliver it. */
async function* pieces(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size)
}

async function read(data: Buffer, size: number, overrides: Partial<MultipartOptions> = {}) {
  const received: { filename: string; contentType: string; bytes: Buffer }[] = []
  const result = await readMultipart(pieces(data, size), type, {
    fileField: 'file',
    maxFileBytes: 1024 * 1024,
    onFile: async (file) => {
      const chunks: Buffer[] = []
      for await (const chunk of file.stream) chunks.push(chunk as Buffer)
      received.push({ filename: file.filename, contentType: file.contentType, bytes: Buffer.concat(chunks) })
    },
    ...overrides,
  })
  return { result, received }
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (err) {
    if (isAppError(err)) return { code: err.code, message: err.message }
    return { code: 'thrown', message: err instanceof Error ? err.message : String(err) }
  }
  throw new Error('expected a refusal')
}

describe('readMultipart', () => {
  // Bytes that look like a delimiter's start, CRLFs and dashes, so a wrong split would show.
  const tricky = Buffer.concat([
    Buffer.from(`\r\n--${boundary.slice(0, 10)}\r\n--\r\n`),
    randomBytes(3000),
    Buffer.from('\r\n-'),
  ])
  const sample = body(
    [
      { name: 'visibility', data: 'private' },
      { name: 'file', filename: 'photo "one".jpg', type: 'image/jpeg', data: tricky },
      { name: 'note', data: 'after the file' },
    ],
    { preamble: 'ignored preamble\r\n', epilogue: 'ignored epilogue' },
  )

  for (const size of [1, 2, 3, 7, boundary.length, boundary.length + 4, 64, 1000, sample.length]) {
    it(`reads fields and the file the same way when the body arrives in ${size}-byte pieces`, async () => {
      const { result, received } = await read(sample, size)
      expect(result.fields).toEqual({ visibility: 'private', note: 'after the file' })
      expect(received).toHaveLength(1)
      expect(received[0]!.filename).toBe('photo "one".jpg')
      expect(received[0]!.contentType).toBe('image/jpeg')
      expect(received[0]!.bytes.equals(tricky)).toBe(true)
      expect(result.file).toEqual({
        filename: 'photo "one".jpg',
        contentType: 'image/jpeg',
        sizeBytes: tricky.length,
        sha256: createHash('sha256').update(tricky).digest('hex'),
      })
    })
  }

  it('reads an empty file part as zero bytes', async () => {
    const { result, received } = await read(
      body([{ name: 'file', filename: 'empty.txt', type: 'text/plain', data: '' }]),
      5,
    )
    expect(result.file?.sizeBytes).toBe(0)
    expect(received[0]!.bytes.length).toBe(0)
  })

  it('answers no file when the body has none, and a part without Content-Type as text/plain (RFC 7578)', async () => {
    expect((await read(body([{ name: 'name', data: 'x' }]), 10)).result.file).toBeNull()
    const { received } = await read(body([{ name: 'file', filename: 'a.bin', data: 'abc' }]), 10)
    expect(received[0]!.contentType).toBe('text/plain')
  })

  it('decodes UTF-8 filenames, plain and RFC 5987 (filename*), and keeps only the last path segment', async () => {
    expect(
      (await read(body([{ name: 'file', filename: 'Café ünïcode.txt', data: 'x' }]), 7)).result.file?.filename,
    ).toBe('Café ünïcode.txt')
    const star = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''na%C3%AFve.txt\r\n\r\nx\r\n--${boundary}--\r\n`,
    )
    expect((await read(star, 9)).result.file?.filename).toBe('naïve.txt')
    expect(
      (await read(body([{ name: 'file', filename: 'C:\\tmp\\up.txt', data: 'x' }]), 50)).result.file?.filename,
    ).toBe('up.txt')
  })

  it('accepts a file of exactly the limit', async () => {
    const { result } = await read(body([{ name: 'file', filename: 'a.bin', data: Buffer.alloc(2000) }]), 300, {
      maxFileBytes: 2000,
    })
    expect(result.file?.sizeBytes).toBe(2000)
  })

  it('skips parts that are not form-data', async () => {
    const data = Buffer.from(
      `--${boundary}\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n--${boundary}\r\nContent-Disposition: form-data; name="b"\r\n\r\ny\r\n--${boundary}--`,
    )
    expect((await read(data, 100)).result.fields).toEqual({ b: 'y' })
  })

  it('waits for a slow consumer instead of buffering the file (backpressure)', async () => {
    const big = randomBytes(4 * 1024 * 1024)
    let sent = 0
    let consumed = 0
    let lead = 0
    async function* source(): AsyncGenerator<Buffer> {
      for await (const piece of pieces(body([{ name: 'file', filename: 'big.bin', data: big }]), 64 * 1024)) {
        sent += piece.length
        yield piece
      }
    }
    const result = await readMultipart(source(), type, {
      fileField: 'file',
      maxFileBytes: 8 * 1024 * 1024,
      onFile: async (file) => {
        for await (const chunk of file.stream) {
          // How far the parser read ahead of what this reader had taken when the chunk came.
          lead = Math.max(lead, sent - consumed)
          consumed += (chunk as Buffer).length
          await tick()
        }
      },
    })
    expect(consumed).toBe(big.length)
    expect(result.file?.sizeBytes).toBe(big.length)
    // Without backpressure the parser would read the whole 4 MB ahead of this reader.
    expect(lead).toBeLessThan(1024 * 1024)
  })

  const refusals: { name: string; data: Buffer; code: string; options?: Partial<MultipartOptions> }[] = [
    {
      name: 'a body that stops before its closing delimiter',
      data: body([{ name: 'file', filename: 'a.txt', data: 'abc' }], { end: false }),
      code: 'invalid_request',
    },
    {
      name: 'a file over the limit',
      data: body([{ name: 'file', filename: 'a.txt', data: Buffer.alloc(2000) }]),
      code: 'limit_exceeded',
      options: { maxFileBytes: 1999 },
    },
    {
      name: 'a second file',
      data: body([
        { name: 'file', filename: 'a.txt', data: 'a' },
        { name: 'file', filename: 'b.txt', data: 'b' },
      ]),
      code: 'invalid_request',
    },
    {
      name: 'a file in another field',
      data: body([{ name: 'upload', filename: 'a.txt', data: 'a' }]),
      code: 'invalid_request',
    },
    { name: 'a field too long', data: body([{ name: 'visibility', data: 'x'.repeat(5000) }]), code: 'invalid_request' },
    {
      name: 'too many fields',
      data: body(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}`, data: 'x' }))),
      code: 'invalid_request',
    },
    { name: 'no delimiter at all', data: Buffer.from('just some text'), code: 'invalid_request' },
    {
      name: 'a part without a name',
      data: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${boundary}--`),
      code: 'invalid_request',
    },
    {
      name: 'a malformed part header',
      data: Buffer.from(`--${boundary}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${boundary}--`),
      code: 'invalid_request',
    },
  ]
  for (const r of refusals) {
    it(`refuses ${r.name} (${r.code})`, async () => {
      expect((await refusal(read(r.data, 100, r.options))).code).toBe(r.code)
    })
  }

  it('passes on what the consumer throws, and the consumer sees the stream fail when the body does', async () => {
    const data = body([{ name: 'file', filename: 'a.txt', data: Buffer.alloc(100_000) }])
    const own = await refusal(
      read(data, 1000, {
        onFile: async () => {
          throw new Error('storage is down')
        },
      }),
    )
    expect(own).toEqual({ code: 'thrown', message: 'storage is down' })

    let consumerSaw: unknown = null
    const tooBig = await refusal(
      read(data, 1000, {
        maxFileBytes: 50_000,
        onFile: async (file) => {
          try {
            for await (const chunk of file.stream) void chunk
          } catch (err) {
            consumerSaw = err
            throw err
          }
        },
      }),
    )
    expect(tooBig.code).toBe('limit_exceeded')
    expect(isAppError(consumerSaw) && consumerSaw.code).toBe('limit_exceeded')
  })
})

describe("a part's own limit (a container's maxFileBytes)", () => {
  const data = body([
    { name: 'container_id', data: 'c1' },
    { name: 'file', filename: 'a.bin', data: Buffer.alloc(200_000, 1) },
  ])
  const consume = async (stream: NodeJS.ReadableStream) => {
    for await (const chunk of stream) void chunk
  }

  it('refuses a part past it while it streams, before the consumer reads it all', async () => {
    let seen = 0
    const refused = await refusal(
      read(data, 1000, {
        onFile: async (file) => {
          file.limit(10_000)
          for await (const chunk of file.stream) seen += (chunk as Buffer).length
        },
      }),
    )
    expect(refused.code).toBe('limit_exceeded')
    expect(seen).toBeLessThanOrEqual(10_000)
  })

  it('refuses it too when the bytes past it were measured before the limit was set', async () => {
    const refused = await refusal(
      read(data, 200_500, {
        onFile: async (file) => {
          await tick()
          await tick()
          file.limit(10_000)
          await consume(file.stream)
        },
      }),
    )
    expect(refused.code).toBe('limit_exceeded')
  })

  it('accepts a part at the limit, and a limit above the route ceiling changes nothing', async () => {
    const { result } = await read(data, 1000, {
      onFile: async (file) => {
        file.limit(200_000)
        await consume(file.stream)
      },
    })
    expect(result.file?.sizeBytes).toBe(200_000)
    const refused = await refusal(
      read(data, 1000, {
        maxFileBytes: 100_000,
        onFile: async (file) => {
          file.limit(500_000)
          await consume(file.stream)
        },
      }),
    )
    expect(refused).toMatchObject({ code: 'limit_exceeded', message: 'The file is larger than 100000 bytes' })
  })
})

describe('multipartBoundary', () => {
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['Multipart/Form-Data;boundary="a b;c"', 'a b;c'],
    ['multipart/form-data; charset=utf-8; boundary=xyz', 'xyz'],
  ])('%s → %s', (header, expected) => {
    expect(multipartBoundary(header)).toBe(expected)
  })

  it.each([
    [undefined, 'unsupported_media_type'],
    ['application/json', 'unsupported_media_type'],
    ['multipart/mixed; boundary=abc', 'unsupported_media_type'],
    ['multipart/form-data', 'invalid_request'],
  ])('refuses %s (%s)', (header, code) => {
    expect(() => multipartBoundary(header)).toThrow(expect.objectContaining({ code }))
  })
})
