import { readFile } from 'node:fs/promises'
import { UsageError } from './args.js'

/** A blueprint as a request carries it: the Markdown source, or a zip holding one `.ebp.md`, base64. */
export type DocumentBody = { source: string } | { archive: string }

/** A document read for sending, with the name its diagnostics are printed under. */
export interface DocumentInput {
  label: string
  body: DocumentBody
}

/** A zip's local file header (or the end record of an empty zip): what marks an archive read from stdin. */
function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 0x03 || bytes[2] === 0x05)
}

async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk))
  return Buffer.concat(chunks)
}

/**
 * Reads `file` (`-` for stdin): a `.zip` (or zip bytes) becomes `archive`, anything else `source`. The
 * server checks sizes and contents; a file that cannot be read is a UsageError (exit 2).
 */
export async function readDocument(
  file: string | undefined,
  stdin: AsyncIterable<Uint8Array | string> | undefined,
): Promise<DocumentInput> {
  if (!file) throw new UsageError('Missing the blueprint file (a .md document or a .zip archive; - for stdin)')
  let bytes: Buffer
  if (file === '-') {
    if (!stdin) throw new UsageError('No standard input to read')
    bytes = await readAll(stdin)
  } else {
    try {
      bytes = await readFile(file)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw new UsageError(code === 'ENOENT' ? `No such file: ${file}` : `Cannot read ${file} (${code ?? err})`)
    }
  }
  const label = file === '-' ? '<stdin>' : file
  const archive = file.toLowerCase().endsWith('.zip') || looksLikeZip(bytes)
  return { label, body: archive ? { archive: bytes.toString('base64') } : { source: bytes.toString('utf8') } }
}
