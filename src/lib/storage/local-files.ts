import { randomUUID } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { link, mkdir, open, readdir, rename, rmdir, stat } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { AppError } from '../errors.js'

// The file-system steps the local driver (local.ts) is built of: each is safe against a concurrent
// delete pruning the folders it works in, and turns a clash of keys and folders into conflict.

/** Renames `from` onto `to`, making its folders. Throws conflict when `to` collides with a folder or a file above it. */
export async function moveIntoPlace(from: string, to: string, key: string): Promise<void> {
  // A delete pruning empty folders may remove the parent between mkdir and rename: try once more.
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dirname(to), { recursive: true })
      await rename(from, to)
      return
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' && attempt === 0) continue
      if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENOTEMPTY') throw collision(key)
      throw err
    }
  }
}

/**
 * Creates an empty placeholder at `path`, failing when anything is there (open with O_EXCL): the one
 * exclusive step of a create, which the rename then fills. Throws conflict (stored already, or a folder).
 */
export async function claim(path: string, key: string): Promise<void> {
  // A delete pruning empty folders may remove the parent between mkdir and open: try once more.
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dirname(path), { recursive: true })
      await (await open(path, 'wx')).close()
      return
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' && attempt === 0) continue
      if (code === 'EEXIST' && (await isFile(path))) throw alreadyUploaded(key)
      if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') throw collision(key)
      throw err
    }
  }
}

/**
 * A hard link to the file at `path`, made in `tmpRoot`: its path, 'missing' when there is no file,
 * or 'unsupported' where the file system has no hard links (the caller copies the bytes instead).
 */
export async function linkAside(path: string, tmpRoot: string): Promise<string | 'missing' | 'unsupported'> {
  if (!(await isFile(path))) return 'missing'
  await mkdir(tmpRoot, { recursive: true })
  const tmp = join(tmpRoot, randomUUID())
  try {
    await link(path, tmp)
    return tmp
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (isMissing(err)) return 'missing'
    if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EMLINK' || code === 'ENOSYS')
      return 'unsupported'
    throw err
  }
}

/** Removes now-empty folders from `path`'s parent up to (not including) `top`; stops at the first non-empty one. */
export async function prune(path: string, top: string): Promise<void> {
  for (let dir = dirname(path); dir.startsWith(top + sep); dir = dirname(dir)) {
    try {
      await rmdir(dir)
    } catch {
      return
    }
  }
}

/** Keys under `folder` (relative to `root`, ending in "/" or empty), in S3's order: byte order of the whole key. */
export async function* walk(root: string, folder: string): AsyncGenerator<string> {
  let entries
  try {
    entries = await readdir(join(root, folder), { withFileTypes: true })
  } catch (err) {
    if (isMissing(err)) return
    throw err
  }
  const named = entries
    .filter((e) => e.isFile() || e.isDirectory())
    .map((e) => ({ name: e.name, folder: e.isDirectory(), sortKey: e.isDirectory() ? `${e.name}/` : e.name }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)))
  for (const entry of named) {
    if (entry.folder) yield* walk(root, `${folder}${entry.name}/`)
    else yield `${folder}${entry.name}`
  }
}

export async function writeFully(handle: FileHandle, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten
}

export function alreadyUploaded(key: string): AppError {
  return new AppError(
    'conflict',
    'This upload URL was already used: bytes are stored at its key, and an upload URL stores once. Ask for a new one',
    { key },
  )
}

function collision(key: string): AppError {
  return new AppError(
    'conflict',
    'The object key collides with another object (a key cannot also be a folder of keys)',
    { key },
  )
}

export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}

export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
