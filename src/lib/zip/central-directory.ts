/**
 * The members of a zip archive held in memory, read from its central directory (APPNOTE 4.3.12-4.3.16)
 * without inflating anything. Only what a plain archive uses is read: one disk, no ZIP64, no encryption
 * (an archive that needs more is reported as such, never guessed at).
 */

/** One member as the central directory and its local header declare it. */
export interface ZipMember {
  readonly name: string
  readonly isDirectory: boolean
  /** 0 stored, 8 deflate; others are reported by the reader. */
  readonly method: number
  readonly encrypted: boolean
  readonly crc32: number
  readonly compressedSize: number
  /** The larger of the central directory's and the local header's declarations. */
  readonly declaredSize: number
  /** Where its compressed bytes start in the archive. */
  readonly dataOffset: number
}

/** Thrown for an archive whose structure cannot be read: truncated, corrupt or using what is not supported. */
export class ZipUnreadable extends Error {
  override name = 'ZipUnreadable'
}

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
const eocdSize = 22
const maxComment = 0xffff

/** The number of members the end-of-central-directory record declares, before any member is read. */
export function declaredMemberCount(zip: Uint8Array): number {
  return endRecord(zip).count
}

/** Every member, in central-directory order. Throws ZipUnreadable. */
export function readMembers(zip: Uint8Array): ZipMember[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  const { count, offset, size, at: eocdAt } = endRecord(zip)
  if (offset + size > eocdAt) throw new ZipUnreadable('the central directory overlaps its end record')
  const members: ZipMember[] = []
  let at = offset
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocdAt || view.getUint32(at, true) !== CENTRAL)
      throw new ZipUnreadable('a central directory entry is corrupt')
    const flags = view.getUint16(at + 8, true)
    const method = view.getUint16(at + 10, true)
    const crc32 = view.getUint32(at + 16, true)
    const compressedSize = view.getUint32(at + 20, true)
    const size = view.getUint32(at + 24, true)
    const nameLength = view.getUint16(at + 28, true)
    const next = at + 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true)
    const localAt = view.getUint32(at + 42, true)
    if (next > eocdAt) throw new ZipUnreadable('a central directory entry runs past the directory')
    if (compressedSize === 0xffffffff || size === 0xffffffff || localAt === 0xffffffff)
      throw new ZipUnreadable('ZIP64 archives are not supported')
    const name = decodeName(zip.subarray(at + 46, at + 46 + nameLength), (flags & 0x800) !== 0)
    const local = localHeader(view, localAt)
    const dataOffset = localAt + 30 + local.nameLength + local.extraLength
    if (dataOffset + compressedSize > offset) throw new ZipUnreadable(`the data of ${name} runs past its place`)
    members.push({
      name,
      isDirectory: name.endsWith('/'),
      method,
      encrypted: (flags & 1) !== 0,
      crc32,
      compressedSize,
      declaredSize: Math.max(size, local.size),
      dataOffset,
    })
    at = next
  }
  return members
}

function endRecord(zip: Uint8Array): { count: number; offset: number; size: number; at: number } {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  const lowest = Math.max(0, zip.byteLength - eocdSize - maxComment)
  for (let at = zip.byteLength - eocdSize; at >= lowest; at--) {
    if (view.getUint32(at, true) !== EOCD) continue
    if (at + eocdSize + view.getUint16(at + 20, true) !== zip.byteLength) continue
    if (view.getUint16(at + 4, true) !== 0 || view.getUint16(at + 6, true) !== 0)
      throw new ZipUnreadable('archives spanning several disks are not supported')
    const count = view.getUint16(at + 10, true)
    const size = view.getUint32(at + 12, true)
    const offset = view.getUint32(at + 16, true)
    if (count === 0xffff || size === 0xffffffff || offset === 0xffffffff)
      throw new ZipUnreadable('ZIP64 archives are not supported')
    return { count, offset, size, at }
  }
  throw new ZipUnreadable('no end of central directory record: the archive is truncated or corrupt')
}

function localHeader(view: DataView, at: number): { nameLength: number; extraLength: number; size: number } {
  if (at + 30 > view.byteLength || view.getUint32(at, true) !== LOCAL)
    throw new ZipUnreadable('a local file header is missing')
  return {
    size: view.getUint32(at + 22, true),
    nameLength: view.getUint16(at + 26, true),
    extraLength: view.getUint16(at + 28, true),
  }
}

/** UTF-8 when the archive says so (bit 11), else CP437, read as Latin-1 (the names that matter here are ASCII). */
function decodeName(bytes: Uint8Array, utf8: boolean): string {
  return Buffer.from(bytes).toString(utf8 ? 'utf8' : 'latin1')
}
