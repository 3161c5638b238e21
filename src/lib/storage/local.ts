import { randomUUID } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import type { Readable } from 'node:stream'
import { systemClock, type Clock } from '../clock.js'
import { AppError } from '../errors.js'
import { checkFilename, checkListLimit, checkSize } from './checks.js'
import { checkContentType, sameContentType } from './content-type.js'
import { checkLength, tooLarge, wrongLength, type Exact } from './exact-length.js'
import { checkKey, checkPrefix } from './keys.js'
import {
  alreadyUploaded,
  claim,
  isFile,
  isMissing,
  linkAside,
  moveIntoPlace,
  prune,
  walk,
  writeFully,
} from './local-files.js'
import {
  checkExpiresIn,
  readSignedUrl,
  signObjectUrl,
  type PutGrant,
  type SignedGrant,
  type SignedQuery,
} from './signed-url.js'
import type { ObjectStorage, StoredObject } from './types.js'

export interface LocalStorageOptions {
  /** DATA_DIR: objects live in `files/<key>`, their content types in `files-meta/<key>` (JSON), unfinished uploads in `files-tmp/`. */
  dataDir: string
  /** PUBLIC_URL: signed URLs point at this instance (or any other sharing SECRET_KEY and DATA_DIR). */
  publicUrl: string
  /** SECRET_KEY: the URL signing key is derived from it. */
  secretKey: string
  clock?: Clock
}

/** An object opened for serving: its facts now, its bytes when asked (or `close()` to not read them). */
export interface OpenedObject extends StoredObject {
  readonly modifiedAt: Date
  /** The bytes from `start` to `end` inclusive (the whole object by default); closes the file when done. */
  stream(range?: { start: number; end: number }): Readable
  close(): Promise<void>
}

/** The embedded driver: files on the local disk, URLs signed by Plinth and served by its own route. */
export interface LocalStorage extends ObjectStorage {
  readonly kind: 'local'
  /** The directory objects live under (`DATA_DIR/files`). */
  readonly root: string
  /** The grant a signed URL's query carries (HEAD is checked as GET). Throws forbidden: expired, tampered. */
  authorize(method: 'GET' | 'PUT', query: SignedQuery): SignedGrant
  /**
   * Stores the body of a signed upload: exactly the signed size, of the signed type, written to a temp file
   * and renamed into place, so a refused or broken upload leaves nothing; only where no object is stored yet
   * (an upload URL stores once). Throws payload_too_large (longer than signed), invalid_request (shorter,
   * other or missing Content-Type), conflict (bytes already stored at the key, or the key collides).
   */
  receive(
    grant: PutGrant,
    body: Readable,
    request: { contentType: string | undefined; contentLength: number | undefined },
  ): Promise<StoredObject>
  /** Opens an object to serve it, or null when absent. Throws invalid_request (bad key). */
  open(key: string): Promise<OpenedObject | null>
}

interface Meta {
  contentType: string | null
}

/** The local driver over `options.dataDir`. Throws internal when the secret key is under 32 bytes. */
export function createLocalStorage(options: LocalStorageOptions): LocalStorage {
  const clock = options.clock ?? systemClock
  const root = resolve(options.dataDir, 'files')
  const metaRoot = resolve(options.dataDir, 'files-meta')
  const tmpRoot = resolve(options.dataDir, 'files-tmp')
  const { secretKey, publicUrl } = options

  function pathOf(key: string): string {
    const path = resolve(root, checkKey(key))
    // checkKey already rules out escapes; this keeps the root closed even if it had a gap.
    if (!path.startsWith(root + sep))
      throw new AppError('invalid_request', 'Invalid object key: it leaves the storage root')
    return path
  }
  // The meta tree has the data tree's shape (same relative paths), so it collides exactly when the data would.
  const metaPathOf = (key: string) => resolve(metaRoot, checkKey(key))

  /**
   * Writes `body` to a temp file, then its meta, then renames it into place; nothing stays behind on failure.
   * `create` (a signed upload) stores only where nothing is: the key is claimed exclusively at the end, so of
   * two uploads racing through one URL exactly one is kept and the other is refused (conflict).
   */
  async function store(
    key: string,
    body: Buffer | Readable,
    contentType: string,
    exact: Exact | undefined,
    mode: 'replace' | 'create' = 'replace',
  ): Promise<StoredObject> {
    const target = pathOf(key)
    const keepBodyOpen = mode === 'create'
    await mkdir(tmpRoot, { recursive: true })
    const tmp = join(tmpRoot, randomUUID())
    let handle: FileHandle | undefined = await open(tmp, 'wx')
    let committed = false
    try {
      let size = 0
      if (Buffer.isBuffer(body)) {
        size = body.length
        if (exact) checkLength(size, exact)
        await writeFully(handle, body)
      } else {
        // Stopping early must not destroy a request body: its socket still has to carry our answer.
        for await (const chunk of body.iterator({ destroyOnReturn: !keepBodyOpen }) as AsyncIterable<Buffer | string>) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
          size += bytes.length
          if (exact && size > exact.bytes) throw exact.tooLarge(exact.bytes)
          await writeFully(handle, bytes)
        }
        if (exact) checkLength(size, exact)
      }
      await handle.datasync()
      await handle.close()
      handle = undefined
      if (mode === 'create') await claim(target, key)
      try {
        await writeMeta(key, { contentType })
        await moveIntoPlace(tmp, target, key)
      } catch (err) {
        // A collision means no object lives at this key: the type just written describes nothing, and a
        // claimed key is given back.
        if (mode === 'create' || (err instanceof AppError && err.code === 'conflict'))
          await rm(metaPathOf(key), { force: true })
        if (mode === 'create') await rm(target, { force: true })
        throw err
      }
      committed = true
      return { sizeBytes: size, contentType }
    } finally {
      await handle?.close().catch(() => {})
      if (!committed) await rm(tmp, { force: true })
    }
  }

  async function writeMeta(key: string, meta: Meta): Promise<void> {
    const path = metaPathOf(key)
    const tmp = join(tmpRoot, `${randomUUID()}.meta`)
    await writeFile(tmp, JSON.stringify(meta), { flag: 'wx' })
    try {
      await moveIntoPlace(tmp, path, key)
    } catch (err) {
      await rm(tmp, { force: true })
      throw err
    }
  }

  async function readMeta(key: string): Promise<Meta | null> {
    try {
      const parsed = JSON.parse(await readFile(metaPathOf(key), 'utf8')) as Partial<Meta>
      return { contentType: typeof parsed.contentType === 'string' ? parsed.contentType : null }
    } catch {
      return null
    }
  }

  async function openObject(key: string): Promise<OpenedObject | null> {
    const path = pathOf(key)
    let handle: FileHandle
    try {
      handle = await open(path, 'r')
    } catch (err) {
      if (isMissing(err)) return null
      throw err
    }
    try {
      const info = await handle.stat()
      if (!info.isFile()) {
        await handle.close()
        return null
      }
      const meta = await readMeta(key)
      let used = false
      return {
        sizeBytes: info.size,
        contentType: meta?.contentType ?? null,
        modifiedAt: info.mtime,
        stream(range) {
          used = true
          return handle.createReadStream(
            range ? { start: range.start, end: range.end, autoClose: true } : { autoClose: true },
          )
        },
        async close() {
          if (!used) await handle.close()
        },
      }
    } catch (err) {
      await handle.close()
      throw err
    }
  }

  return {
    kind: 'local',
    exclusiveUploads: true,
    root,

    async presignPut(key, { contentType, sizeBytes, expiresIn }) {
      checkSize(sizeBytes)
      const grant: PutGrant = {
        method: 'PUT',
        key: checkKey(key),
        expires: clock.seconds() + checkExpiresIn(expiresIn),
        sizeBytes,
        contentType: checkContentType(contentType),
      }
      return signObjectUrl(secretKey, publicUrl, grant)
    },

    async presignGet(key, { expiresIn, filename, contentType }) {
      return signObjectUrl(secretKey, publicUrl, {
        method: 'GET',
        key: checkKey(key),
        expires: clock.seconds() + checkExpiresIn(expiresIn),
        filename: filename === undefined ? null : checkFilename(filename),
        contentType: contentType === undefined ? null : checkContentType(contentType),
      })
    },

    async put(key, body, { contentType, sizeBytes }) {
      const exact =
        sizeBytes === undefined
          ? undefined
          : { bytes: checkSize(sizeBytes), tooLarge: (limit: number) => wrongLength(limit) }
      await store(key, body, checkContentType(contentType), exact)
    },

    async get(key) {
      const opened = await openObject(key)
      return opened ? opened.stream() : null
    },

    async head(key) {
      const path = pathOf(key)
      try {
        const info = await stat(path)
        if (!info.isFile()) return null
        return { sizeBytes: info.size, contentType: (await readMeta(key))?.contentType ?? null }
      } catch (err) {
        if (isMissing(err)) return null
        throw err
      }
    },

    async delete(key) {
      const path = pathOf(key)
      try {
        if ((await stat(path)).isFile()) await rm(path)
      } catch (err) {
        if (!isMissing(err)) throw err
      }
      await rm(metaPathOf(key), { force: true })
      await prune(path, root)
      await prune(metaPathOf(key), metaRoot)
    },

    async copy(from, to) {
      if (checkKey(from) === checkKey(to))
        throw new AppError('invalid_request', 'An object cannot be copied onto itself')
      // A hard link shares the bytes instead of writing them again (confirm copies every upload). It is a
      // true copy here: a stored object is never rewritten in place (every write renames a new file over
      // its key), so the link keeps the bytes it was made from whatever is stored at `from` later.
      const linked = await linkAside(pathOf(from), tmpRoot)
      if (linked === 'missing') return false
      if (linked !== 'unsupported') {
        try {
          await writeMeta(to, { contentType: (await readMeta(from))?.contentType ?? 'application/octet-stream' })
          await moveIntoPlace(linked, pathOf(to), to)
        } catch (err) {
          await rm(linked, { force: true })
          throw err
        }
        return true
      }
      const source = await openObject(from)
      if (!source) return false
      const stream = source.stream()
      try {
        await store(to, stream, source.contentType ?? 'application/octet-stream', {
          bytes: source.sizeBytes,
          tooLarge: wrongLength,
        })
      } finally {
        stream.destroy()
      }
      return true
    },

    async list(prefix, limit) {
      checkPrefix(prefix)
      checkListLimit(limit)
      const keys: string[] = []
      const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1)
      for await (const key of walk(root, folder)) {
        if (key.startsWith(prefix)) keys.push(key)
        if (keys.length >= limit) break
      }
      return keys
    },

    async close() {},

    authorize(method, query) {
      return readSignedUrl(secretKey, method, query, clock.seconds())
    },

    async receive(grant, body, request) {
      if (request.contentType === undefined || !sameContentType(request.contentType, grant.contentType)) {
        throw new AppError(
          'invalid_request',
          `Content-Type must be ${grant.contentType}, as the upload URL was signed for`,
          {
            expected: grant.contentType,
          },
        )
      }
      const exact = { bytes: grant.sizeBytes, tooLarge }
      if (request.contentLength !== undefined) checkLength(request.contentLength, exact)
      // Single use: refused at once when bytes are already stored (the exclusive claim in store() is what
      // holds under a race; this only spares the client sending a body that would be refused anyway).
      if (await isFile(pathOf(grant.key))) throw alreadyUploaded(grant.key)
      return store(grant.key, body, grant.contentType, exact, 'create')
    },

    open: openObject,
  }
}
