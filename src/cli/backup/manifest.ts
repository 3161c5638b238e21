import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, open } from 'node:fs/promises'
import { dirname } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { z } from 'zod'

/** The file a backup directory is described by; written last, so a directory without it is not a backup. */
export const manifestName = 'manifest.json'

const fileEntry = z.object({ path: z.string().min(1), bytes: z.number().int().min(0), sha256: z.string().length(64) })
const databaseEntry = fileEntry.extend({ tables: z.record(z.string(), z.number().int().min(0)) })

const manifestSchema = z.object({
  format: z.literal(1),
  plinthVersion: z.string(),
  createdAt: z.string(),
  /** The last system migration applied in the copy, and how many were. */
  migration: z.object({ last: z.string().nullable(), count: z.number().int().min(0) }),
  /** `file`: DATA_DIR/secret.key is in the copy; `environment`: SECRET_KEY was set, and is not. */
  secretKey: z.enum(['file', 'environment']),
  /** HMAC of a fixed text under the key: tells a wrong SECRET_KEY at restore without holding the key. */
  secretKeyCheck: z.string(),
  /** Where files were: `local` (copied here) or `s3` (in the bucket, not copied). */
  storage: z.enum(['local', 's3']),
  databases: z.array(databaseEntry),
  files: z.array(fileEntry),
  /** Files listed at the start that were gone when their turn came (deleted while the backup ran). */
  vanished: z.array(z.string()),
})

export type Manifest = z.infer<typeof manifestSchema>
export type FileEntry = z.infer<typeof fileEntry>
export type DatabaseEntry = z.infer<typeof databaseEntry>

export function writeManifest(path: string, manifest: Manifest): void {
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
}

/** Reads and checks a manifest; throws Error in plain words when it is missing or not one this build reads. */
export function readManifest(path: string): Manifest {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${path} is missing: not a Plinth backup, or one that did not finish`, { cause: err })
    }
    throw err
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new Error(`${path} is not JSON`, { cause: err })
  }
  const parsed = manifestSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`${path} is not a manifest this Plinth reads (${issue.path.join('.')}: ${issue.message})`)
  }
  for (const entry of [...parsed.data.databases, ...parsed.data.files]) {
    if (!isSafeRelative(entry.path)) throw new Error(`${path} names a path outside the backup: ${entry.path}`)
  }
  return parsed.data
}

/** A relative path that stays inside its root: no absolute path, no `..`, no empty part. */
export function isSafeRelative(path: string): boolean {
  return (
    !path.startsWith('/') && !path.includes('\\') && path.split('/').every((p) => p !== '' && p !== '.' && p !== '..')
  )
}

/** The SHA-256 and size of a file. */
export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256')
  let bytes = 0
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk)
    bytes += chunk.length
  }
  return { bytes, sha256: hash.digest('hex') }
}

/**
 * Copies `from` to `to` (creating its directory), hashing the bytes as they are written. Answers null when
 * `from` is gone (deleted meanwhile). The source is read through one open descriptor: local storage replaces
 * an object by renaming a new file over it, so what is read is one version, whole.
 */
export async function copyHashed(
  from: string,
  to: string,
  mode?: number,
): Promise<{ bytes: number; sha256: string } | null> {
  let source
  try {
    source = await open(from, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  await mkdir(dirname(to), { recursive: true, mode: 0o700 })
  const hash = createHash('sha256')
  let bytes = 0
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      bytes += chunk.length
      done(null, chunk)
    },
  })
  await pipeline(source.createReadStream(), tap, createWriteStream(to, { flags: 'wx', ...(mode ? { mode } : {}) }))
  return { bytes, sha256: hash.digest('hex') }
}
