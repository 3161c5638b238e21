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
