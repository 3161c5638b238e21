import { crc32 } from 'node:zlib'
import { Inflate } from 'fflate'
import type { ZipMember } from './central-directory.js'

/** What came out of a member: its bytes, or why not (and, for a refusal, how much was produced before it). */
export type Extracted =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too_large'; produced: number }
  | { ok: false; reason: 'unreadable'; message: string }

/**
 * Compressed input handed to the inflater at a time. DEFLATE expands at most about 1032:1, so one step
 * produces at most about 530 KB: memory stays under `limit` plus one step however much a member would
 * inflate to (a zip bomb stops within a step of the limit).
 */
export const inflateStep = 512

/**
 * A member's bytes, streamed through fflate's Inflate a step at a time and stopped as soon as the output
 * passes `limit` bytes; the output must then match the declared size and CRC-32.
 */
export function extractMember(zip: Uint8Array, member: ZipMember, limit: number): Extracted {
  if (member.encrypted) return { ok: false, reason: 'unreadable', message: `${member.name} is encrypted` }
  if (member.declaredSize > limit) return { ok: false, reason: 'too_large', produced: 0 }
  const data = zip.subarray(member.dataOffset, member.dataOffset + member.compressedSize)
  const out = member.method === 0 ? stored(data, limit) : member.method === 8 ? inflate(data, limit) : null
  if (!out)
    return { ok: false, reason: 'unreadable', message: `${member.name} uses compression method ${member.method}` }
  if (!out.ok) return out.reason === 'too_large' ? { ok: false, reason: 'too_large', produced: out.produced } : out
  if (out.bytes.byteLength !== member.declaredSize)
    return { ok: false, reason: 'unreadable', message: `${member.name} does not inflate to its declared size` }
  if (crc32(out.bytes) >>> 0 !== member.crc32 >>> 0)
    return { ok: false, reason: 'unreadable', message: `${member.name} fails its CRC-32 check` }
  return out
}

/** Up to `count` first bytes of a member (its magic number), inflating no more than needed; null when unreadable. */
export function peekMember(zip: Uint8Array, member: ZipMember, count: number): Uint8Array | null {
  if (member.encrypted) return null
  const data = zip.subarray(member.dataOffset, member.dataOffset + member.compressedSize)
  if (member.method === 0) return data.subarray(0, count)
  if (member.method !== 8) return null
  const out = inflate(data, count)
  if (out.ok) return out.bytes
  return out.reason === 'too_large' && 'head' in out ? out.head : null
}

function stored(data: Uint8Array, limit: number): Extracted {
  if (data.byteLength > limit) return { ok: false, reason: 'too_large', produced: data.byteLength }
  return { ok: true, bytes: data.slice() }
}

type Inflated = Extracted | { ok: false; reason: 'too_large'; produced: number; head: Uint8Array }

/** Inflates to the end, or until the output passes `limit` (keeping its first `limit` bytes as `head`). */
function inflate(data: Uint8Array, limit: number): Inflated {
  const chunks: Uint8Array[] = []
  let produced = 0
  const inflater = new Inflate((chunk) => {
    const room = limit - produced
    produced += chunk.byteLength
    if (room > 0) chunks.push(chunk.byteLength <= room ? chunk : chunk.subarray(0, room))
  })
  try {
    for (let at = 0; at < data.byteLength && produced <= limit; at += inflateStep) {
      inflater.push(data.subarray(at, at + inflateStep), at + inflateStep >= data.byteLength)
    }
    if (data.byteLength === 0) inflater.push(new Uint8Array(0), true)
  } catch (err) {
    if (produced <= limit)
      return { ok: false, reason: 'unreadable', message: `its data is corrupt (${(err as Error).message})` }
  }
  const kept = concat(chunks)
  return produced > limit ? { ok: false, reason: 'too_large', produced, head: kept } : { ok: true, bytes: kept }
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}
