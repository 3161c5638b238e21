import { zipSync, type Zippable } from 'fflate'

/** A zip made in the test (fflate), as bytes. */
export function zipBytes(files: Zippable): Uint8Array {
  return zipSync(files, { level: 6 })
}

/** A zip made in the test, as the base64 a blueprint request carries. */
export function zipBase64(files: Zippable): string {
  return Buffer.from(zipBytes(files)).toString('base64')
}

/**
 * A zip bomb: one member of `size` repeated bytes under `name`, its declared uncompressed size patched (in
 * the local header and the central directory) to `declared`, so that only the inflated output tells.
 */
export function zipBomb(name: string, size: number, declared: number): string {
  const bytes = zipBytes({ [name]: [new Uint8Array(size).fill(0x61), { level: 9 }] })
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  view.setUint32(22, declared, true)
  const central = findSignature(bytes, 0x02014b50)
  view.setUint32(central + 24, declared, true)
  return Buffer.from(bytes).toString('base64')
}

/** The offset of the first 4-byte little-endian signature. */
export function findSignature(bytes: Uint8Array, signature: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = 0; i + 4 <= bytes.byteLength; i++) if (view.getUint32(i, true) === signature) return i
  throw new Error(`signature ${signature.toString(16)} not found`)
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

/**
 * A large zip bomb, made without holding what it inflates to: `size` spaces deflated by zlib's run-length
 * strategy a megabyte at a time (1 GB comes to about 1 MB in about a second), in a zip whose headers
 * declare `declared` bytes (and a CRC of 0: nothing should inflate far enough to check it).
 */
export async function streamedZipBomb(name: string, size: number, declared: number): Promise<string> {
  const { createDeflateRaw, constants } = await import('node:zlib')
  const deflate = createDeflateRaw({ level: 9, strategy: constants.Z_RLE })
  const out: Buffer[] = []
  deflate.on('data', (chunk: Buffer) => out.push(chunk))
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve)
    deflate.on('error', reject)
  })
  const block = Buffer.alloc(1 << 20, 0x20)
  for (let left = size; left > 0; left -= block.byteLength) {
    const part = left >= block.byteLength ? block : block.subarray(0, left)
    if (!deflate.write(part)) await new Promise((resolve) => deflate.once('drain', resolve))
  }
  deflate.end()
  await done
  return Buffer.from(zipOf([{ name, method: 8, crc32: 0, declared, data: Buffer.concat(out) }])).toString('base64')
}

/**
 * A zip of members already compressed, every header written here (sizes as given). `flags` is the general
 * purpose bit flag; `zip64` moves both sizes into a ZIP64 extra field (0xffffffff in the headers).
 */
export function zipOf(
  members: {
    name: string
    method: number
    crc32: number
    declared: number
    data: Uint8Array
    flags?: number
    zip64?: boolean
  }[],
): Uint8Array {
  const parts: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const m of members) {
    const name = Buffer.from(m.name)
    const extra = Buffer.alloc(m.zip64 ? 20 : 0)
    if (m.zip64) {
      extra.writeUInt16LE(0x0001, 0)
      extra.writeUInt16LE(16, 2)
      extra.writeBigUInt64LE(BigInt(m.declared), 4)
      extra.writeBigUInt64LE(BigInt(m.data.byteLength), 12)
    }
    const compressed = m.zip64 ? 0xffffffff : m.data.byteLength
    const declared = m.zip64 ? 0xffffffff : m.declared
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(m.zip64 ? 45 : 20, 4)
    local.writeUInt16LE(m.flags ?? 0, 6)
    local.writeUInt16LE(m.method, 8)
    local.writeUInt32LE(m.crc32, 14)
    local.writeUInt32LE(compressed, 18)
    local.writeUInt32LE(declared, 22)
    local.writeUInt16LE(name.byteLength, 26)
    local.writeUInt16LE(extra.byteLength, 28)
    parts.push(local, name, extra, Buffer.from(m.data))
    const entry = Buffer.alloc(46)
    entry.writeUInt32LE(0x02014b50, 0)
    entry.writeUInt16LE(m.zip64 ? 45 : 20, 4)
    entry.writeUInt16LE(m.zip64 ? 45 : 20, 6)
    entry.writeUInt16LE(m.flags ?? 0, 8)
    entry.writeUInt16LE(m.method, 10)
    entry.writeUInt32LE(m.crc32, 16)
    entry.writeUInt32LE(compressed, 20)
    entry.writeUInt32LE(declared, 24)
    entry.writeUInt16LE(name.byteLength, 28)
    entry.writeUInt16LE(extra.byteLength, 30)
    entry.writeUInt32LE(offset, 42)
    central.push(entry, name, extra)
    offset += 30 + name.byteLength + extra.byteLength + m.data.byteLength
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(members.length, 8)
  end.writeUInt16LE(members.length, 10)
  end.writeUInt32LE(directory.byteLength, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...parts, directory, end])
}
