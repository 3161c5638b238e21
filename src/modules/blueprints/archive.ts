import { AppError } from '../../lib/errors.js'
import { isUnsafeName, openZip, ZipUnreadable, type ZipMember, type ZipReader } from '../../lib/zip/index.js'

/** Archive limits (§ Limits): the zip, its members, and each member's uncompressed bytes. */
export const archiveLimits = { bytes: 4_000_000, members: 64, memberBytes: 1_000_000 } as const

/** Every refusal of an archive (§ Archive carrying a document), with its status; the code goes in details.code. */
export const archiveRefusals = {
  'archive.not_a_zip': 400,
  'archive.invalid_base64': 400,
  'archive.unreadable': 400,
  'archive.too_large': 413,
  'archive.too_many_members': 400,
  'archive.unsafe_member_name': 400,
  'archive.nested_archive': 400,
  'archive.member_too_large': 413,
  'archive.no_document': 400,
  'archive.multiple_documents': 400,
  'archive.unexpected_member': 400,
  'archive.empty_document': 400,
  'archive.not_utf8': 400,
} as const

export type ArchiveRefusal = keyof typeof archiveRefusals

/** The suffix of the one document an archive carries. */
export const documentSuffix = '.ebp.md'

const archiveNames = /\.(zip|jar|war|ear|apk|gz|tgz|tar|bz2|tbz2?|xz|txz|7z|rar|zst|zstd)$/i
/** Magic numbers of archive formats: zip (local header, empty archive), gzip, bzip2, xz, 7z, rar, zstd. */
const archiveMagic = [
  [0x50, 0x4b, 0x03, 0x04],
  [0x50, 0x4b, 0x05, 0x06],
  [0x1f, 0x8b],
  [0x42, 0x5a, 0x68],
  [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
  [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c],
  [0x52, 0x61, 0x72, 0x21],
  [0x28, 0xb5, 0x2f, 0xfd],
]

function refuse(code: ArchiveRefusal, message: string, details: Record<string, unknown> = {}): AppError {
  const status = archiveRefusals[code]
  return new AppError(status === 413 ? 'payload_too_large' : 'invalid_request', message, { code, ...details })
}

/**
 * The document a base64 zip carries: exactly one `.ebp.md` member at any depth and nothing else (folders
 * aside). Members are listed from the central directory (yauzl) before anything is inflated; the document
 * is inflated as a stream and stopped as soon as it passes 1,000,000 bytes, whatever its header declared.
 * Throws AppError invalid_request (400) or payload_too_large (413), `details.code` one of archiveRefusals.
 */
export async function readArchiveDocument(archive: string): Promise<string> {
  const zip = decodeBase64(archive)
  if (zip.byteLength < 4 || zip[0] !== 0x50 || zip[1] !== 0x4b) {
    throw refuse('archive.not_a_zip', 'The archive is not a zip file (no PK signature)')
  }
  const { reader, members } = await listMembers(zip)
  const unsafe = members.find(isUnsafeName)
  if (unsafe) {
    throw refuse('archive.unsafe_member_name', `The archive member ${quote(unsafe.name)} has an unsafe name`, {
      member: unsafe.name,
    })
  }
  const large = members.find((m) => m.declaredSize > archiveLimits.memberBytes)
  if (large) throw memberTooLarge(large)
  const nested = members.find((m) => !m.isDirectory && archiveNames.test(m.name))
  if (nested) throw nestedArchive(nested)
  const documents = members.filter((m) => !m.isDirectory && m.name.toLowerCase().endsWith(documentSuffix))
  const [document, second] = documents
  if (!document) throw refuse('archive.no_document', `The archive holds no ${documentSuffix} document`)
  if (second) {
    throw refuse(
      'archive.multiple_documents',
      `The archive holds more than one document: ${quote(document.name)} and ${quote(second.name)}`,
      { members: [document.name, second.name] },
    )
  }
  for (const member of members) {
    if (member === document || member.isDirectory) continue
    if (isArchive(await reader.peek(member, 8))) throw nestedArchive(member)
    throw refuse('archive.unexpected_member', `The archive holds ${quote(member.name)} beside its document`, {
      member: member.name,
    })
  }
  return documentText(reader, document)
}

/** Strict base64 (whitespace between characters allowed), its size checked before anything is decoded. */
function decodeBase64(archive: string): Uint8Array {
  const maxText = Math.ceil(archiveLimits.bytes / 3) * 4
  if (archive.length > 2 * maxText) throw tooLarge()
  const text = /\s/.test(archive) ? archive.replace(/\s+/g, '') : archive
  if (text.length > maxText) throw tooLarge()
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw refuse('archive.invalid_base64', 'The archive field is not base64')
  }
  const bytes = Buffer.from(text, 'base64')
  if (bytes.byteLength > archiveLimits.bytes) throw tooLarge()
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

function tooLarge(): AppError {
  return refuse('archive.too_large', `The archive is over ${archiveLimits.bytes} bytes`, { limit: archiveLimits.bytes })
}

/** The members, their number checked against the limit before any is read. */
async function listMembers(zip: Uint8Array): Promise<{ reader: ZipReader; members: readonly ZipMember[] }> {
  try {
    const reader = await openZip(zip)
    const count = reader.memberCount
    if (count > archiveLimits.members) {
      throw refuse('archive.too_many_members', `The archive has ${count} members; at most ${archiveLimits.members}`, {
        limit: archiveLimits.members,
      })
    }
    return { reader, members: await reader.readMembers() }
  } catch (err) {
    if (err instanceof ZipUnreadable) throw refuse('archive.unreadable', `The archive cannot be read: ${err.message}`)
    throw err
  }
}

function isArchive(head: Uint8Array | null): boolean {
  if (!head) return false
  return archiveMagic.some((magic) => magic.length <= head.byteLength && magic.every((b, i) => head[i] === b))
}

function nestedArchive(member: ZipMember): AppError {
  return refuse('archive.nested_archive', `The archive member ${quote(member.name)} is itself an archive`, {
    member: member.name,
  })
}

function memberTooLarge(member: ZipMember): AppError {
  return refuse(
    'archive.member_too_large',
    `The archive member ${quote(member.name)} is over ${archiveLimits.memberBytes} bytes uncompressed`,
    { member: member.name, limit: archiveLimits.memberBytes },
  )
}

/** The document, inflated under the member limit: not empty, valid UTF-8, and not itself an archive. */
async function documentText(reader: ZipReader, document: ZipMember): Promise<string> {
  const out = await reader.extract(document, archiveLimits.memberBytes)
  if (!out.ok && out.reason === 'too_large') throw memberTooLarge(document)
  if (!out.ok) throw refuse('archive.unreadable', `The archive cannot be read: ${out.message}`)
  if (isArchive(out.bytes.subarray(0, 8))) throw nestedArchive(document)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(out.bytes)
  } catch {
    throw refuse('archive.not_utf8', `The document ${quote(document.name)} is not valid UTF-8`, {
      member: document.name,
    })
  }
  if (text.trim() === '') {
    throw refuse('archive.empty_document', `The document ${quote(document.name)} is empty`, { member: document.name })
  }
  return text
}

function quote(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name)
}
