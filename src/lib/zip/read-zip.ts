import { crc32 } from 'node:zlib'
import { fromBufferPromise, getFileNameLowLevel, validateFileName, type Entry, type ZipFile } from 'yauzl'

/**
 * A zip archive held in memory, read with yauzl: its members come from the central directory (and each
 * one's local header) before a byte is inflated, and a member's bytes come through yauzl's inflating stream,
 * stopped as soon as they pass a cap. What yauzl refuses (no end record, a corrupt directory or local header,
 * data past the end, several disks, strong encryption) and data that does not inflate are ZipUnreadable.
 */

/** One member as the central directory and its local header declare it. */
export interface ZipMember {
  /** The header's name field: UTF-8 when bit 11 says so, else CP437; backslashes kept as written. */
  readonly name: string
  /** The name field's bytes as stored (CP437 shows a control byte as a glyph: check these for it). */
  readonly rawName: Uint8Array
  readonly isDirectory: boolean
  /** The larger of the central directory's and the local header's declarations. */
  readonly declaredSize: number
}

/** What came out of a member: its bytes, or why not (and, for a refusal, how much was produced before it). */
export type Extracted =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too_large'; produced: number }
  | { ok: false; reason: 'unreadable'; message: string }

/** Thrown for an archive whose structure cannot be read: truncated, corrupt or using what is not supported. */
export class ZipUnreadable extends Error {
  override name = 'ZipUnreadable'
}

export interface ZipReader {
  /** The number of members the end of central directory record declares, known before any member is read. */
  readonly memberCount: number
  /** Every member, in central-directory order, its local header read too; nothing inflated. Throws ZipUnreadable. */
  readMembers(): Promise<readonly ZipMember[]>
  /** A member's bytes, stopped as soon as they pass `limit`, then checked against its declared size and CRC-32. */
  extract(member: ZipMember, limit: number): Promise<Extracted>
  /** Up to `count` first bytes of a member (its magic number), inflating a chunk at most; null when unreadable. */
  peek(member: ZipMember, count: number): Promise<Uint8Array | null>
}

/**
 * Opens an archive held in memory from its end of central directory record. Throws ZipUnreadable.
 *
 * decodeStrings is off so that a name is decoded here with its backslashes kept and judged by the caller (yauzl
 * would refuse it with an error naming the name it rewrote). validateEntrySizes is off because yauzl stops a
 * member at its declared size, which cannot tell output past the cap (too large) from output that merely
 * disagrees with its header (unreadable): extract counts the output against the cap itself.
 */
export async function openZip(zip: Uint8Array): Promise<ZipReader> {
  const buffer = Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength)
  const file = await fromBufferPromise(buffer, { decodeStrings: false, validateEntrySizes: false }).catch(unreadable)
  const entries = new Map<ZipMember, Entry>()
  let listing: Promise<readonly ZipMember[]> | undefined
  const entryOf = (member: ZipMember): Entry => {
    const entry = entries.get(member)
    if (!entry) throw new TypeError(`${member.name} is not a member read from this archive`)
    return entry
  }
  return {
    memberCount: file.entryCount,
    readMembers: () => (listing ??= listMembers(file, entries).catch(unreadable)),
    extract: (member, limit) => extractMember(file, entryOf(member), member, limit),
    peek: (member, count) => peekMember(file, entryOf(member), count),
  }
}

/**
 * A name not to extract: empty, with a control character (in its bytes or as decoded), or refused by yauzl's
 * validateFileName once `\` is read as `/` (an absolute name `/x`, `\x` or `C:x`, or a `..` segment). A
 * backslash elsewhere is a plain character of the name.
 */
export function isUnsafeName({ name, rawName }: ZipMember): boolean {
  if (name === '' || rawName.some((byte) => byte < 0x20)) return true
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) < 0x20) return true
  return validateFileName(name.replaceAll('\\', '/')) !== null
}

async function listMembers(file: ZipFile, entries: Map<ZipMember, Entry>): Promise<readonly ZipMember[]> {
  const members: ZipMember[] = []
  for await (const entry of file.eachEntry()) {
    const local = await file.readLocalFileHeaderPromise(entry)
    // The ZIP64 marker in a local header defers to its extra field; the central value (yauzl has read its
    // ZIP64 field) then stands.
    const localSize = local.uncompressedSize === 0xffffffff ? 0 : local.uncompressedSize
    // Only the name field: the Info-ZIP Unicode Path field (extra field 0x7075) could show a safe name in
    // front of an unsafe one, so it is not read.
    const name = getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, [], true)
    const member: ZipMember = {
      name,
      rawName: entry.fileNameRaw,
      isDirectory: name.endsWith('/'),
      declaredSize: Math.max(entry.uncompressedSize, localSize),
    }
    entries.set(member, entry)
    members.push(member)
  }
  return members
}

async function extractMember(file: ZipFile, entry: Entry, member: ZipMember, limit: number): Promise<Extracted> {
  const refused = undecodable(entry, member.name)
  if (refused) return { ok: false, reason: 'unreadable', message: refused }
  if (member.declaredSize > limit) return { ok: false, reason: 'too_large', produced: 0 }
  const chunks: Buffer[] = []
  let produced = 0
  try {
    for await (const chunk of await openData(file, entry)) {
      produced += chunk.byteLength
      // Leaving the loop destroys the stream: a bomb stops within one inflated chunk (16 KiB) of the cap.
      if (produced > limit) return { ok: false, reason: 'too_large', produced }
      chunks.push(chunk)
    }
  } catch (err) {
    if (!isArchiveFault(err)) throw err
    return { ok: false, reason: 'unreadable', message: `the data of ${member.name} is corrupt (${err.message})` }
  }
  const bytes = Buffer.concat(chunks)
  if (bytes.byteLength !== member.declaredSize)
    return { ok: false, reason: 'unreadable', message: `${member.name} does not inflate to its declared size` }
  if (crc32(bytes) >>> 0 !== entry.crc32 >>> 0)
    return { ok: false, reason: 'unreadable', message: `${member.name} fails its CRC-32 check` }
  return { ok: true, bytes }
}

async function peekMember(file: ZipFile, entry: Entry, count: number): Promise<Uint8Array | null> {
  if (!entry.canDecodeFileData()) return null
  const chunks: Buffer[] = []
  let got = 0
  try {
    for await (const chunk of await openData(file, entry)) {
      chunks.push(chunk)
      got += chunk.byteLength
      if (got >= count) break
    }
  } catch (err) {
    if (!isArchiveFault(err)) throw err
    return null
  }
  return Buffer.concat(chunks).subarray(0, count)
}

/** Why yauzl cannot decode a member's data (it would say so when the stream is opened), or null. */
function undecodable(entry: Entry, name: string): string | null {
  if (entry.isEncrypted()) return `${name} is encrypted`
  if (!entry.canDecodeFileData()) return `${name} uses compression method ${entry.compressionMethod}`
  return null
}

/** A member's data as yauzl streams it, inflated when deflated, a Buffer at a time. */
async function openData(file: ZipFile, entry: Entry): Promise<AsyncIterable<Buffer>> {
  return file.openReadStreamPromise(entry)
}

/**
 * Whether an error is yauzl's or node:zlib's report on the archive's bytes. yauzl reports every fault of an
 * archive as a plain `new Error(message)` through its callbacks and events, and zlib as an Error with a `Z_`
 * code; a TypeError or RangeError (or anything else) is a fault of ours, and goes up as such (500).
 */
export function isArchiveFault(err: unknown): err is Error {
  if (!(err instanceof Error)) return false
  if (Object.getPrototypeOf(err) === Error.prototype) return true
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && code.startsWith('Z_')
}

function unreadable(err: unknown): never {
  if (isArchiveFault(err)) throw new ZipUnreadable(err.message, { cause: err })
  throw err
}
