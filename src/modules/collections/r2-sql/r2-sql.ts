import Database from 'better-sqlite3'
import { copyFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { sql, type Kysely } from 'kysely'
import type { Clock } from '../../../lib/clock.js'
import { openSqlite, type DbHandle } from '../../../lib/db/index.js'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Logger } from '../../../lib/log.js'
import type { PubSub, Unsubscribe } from '../../../lib/pubsub/index.js'
import type { ObjectStorage } from '../../../lib/storage/index.js'
import { createR2SqlFilesStore, type R2SqlFileRow } from './files-store.js'

/**
 * r2_sql collections (decision 036): each is an SQLite file kept in object storage. One instance at a time
 * holds the writer claim (r2_sql_files.writer, with a lease); its writes go to its local working copy, and
 * its reads too. Every other instance reads the last published version, downloaded once into a local cache
 * and opened read-only. Publishing snapshots the working copy (VACUUM INTO), uploads it as the next version
 * and records that version; a schedule publishes every claim an instance holds, `publish` one on demand
 * (from any instance: the claim's holder is asked over pub/sub).
 */
export interface R2Sql {
  /** Makes the collection's working copy, its table (`make`), and publishes version 1 before answering. */
  create(ref: R2SqlRef, make: (handle: DbHandle) => Promise<void>): Promise<void>
  /** The copy to read (this instance's working copy while it holds the claim, else the last published) or to write (claims first). Throws conflict, not_found. */
  handle(ref: R2SqlRef, intent: 'read' | 'write'): Promise<DbHandle>
  /** Publishes the collection's unpublished writes, wherever they are held. Throws service_unavailable when their holder does not answer. */
  publish(ref: R2SqlRef): Promise<PublishResult>
  /** Publishes every claim this instance holds (the schedule's tick). */
  publishHeld(): Promise<void>
  /** Asks every instance to publish what it holds (the schedule's job, run on one instance). */
  publishEverywhere(): Promise<void>
  /** Removes the collection's copies here and its versions in object storage. */
  drop(ref: R2SqlRef): Promise<void>
  /** Publishes what this instance holds (a restart does not lose acknowledged writes), then closes every copy. */
  close(): Promise<void>
}

export interface R2SqlRef {
  readonly projectId: string
  /** The collection's id. */
  readonly id: string
}

export interface PublishResult {
  /** False when there was nothing new to publish. */
  readonly published: boolean
  readonly version: number
  readonly sizeBytes: number
  /** Unix seconds. */
  readonly publishedAt: number
}

export interface R2SqlOptions {
  readonly systemDb: Kysely<any>
  readonly storage: ObjectStorage
  readonly dataDir: string
  /** This instance; working copies live under it (letters, digits, _ and -). Stable across restarts when alone, so a claim survives one. */
  readonly instanceId: string
  readonly clock: Clock
  readonly log: Logger
  readonly pubsub: PubSub
  /** How long a claim lasts without a write renewing it (10 minutes). */
  readonly leaseMs?: number
  /** A publish gives the claim up only after this long without a write (30 s): a write may hold its handle across awaits. */
  readonly quietMs?: number
  /** How long a publish asked of another instance is waited for (30 s). */
  readonly answerMs?: number
}

interface Copy {
  readonly handle: DbHandle
  readonly root: Kysely<any>
}

interface Local {
  readonly ref: R2SqlRef
  work: Copy | null
  claim: { token: string; leaseUntil: number } | null
  lastWriteAt: number
  /** The working copy's change marker when it last matched a published version; null when unknown. */
  publishedMarker: string | null
  published: (Copy & { version: number }) | null
  opening: Map<number, Promise<Copy & { version: number }>>
  chain: Promise<unknown>
}

const publishChannel = 'plinth:r2-sql:publish'
const replyChannel = 'plinth:r2-sql:published'
const contentType = 'application/vnd.sqlite3'
const instancePattern = /^[A-Za-z0-9_-]{1,64}$/

export function createR2Sql(options: R2SqlOptions): R2Sql & { start(): Promise<void> } {
  const { storage, clock, log, instanceId } = options
  if (!instancePattern.test(instanceId)) throw new Error('r2_sql: the instance id must be 1-64 letters, digits, _ or -')
  const leaseMs = options.leaseMs ?? 600_000
  const quietMs = options.quietMs ?? 30_000
  const answerMs = options.answerMs ?? 30_000
  const store = createR2SqlFilesStore(options.systemDb)
  const root = join(options.dataDir, 'r2-sql')
  const locals = new Map<string, Local>()
  const waiting = new Map<string, { resolve: (r: PublishResult) => void; reject: (e: unknown) => void }>()
  const unsubscribes: Unsubscribe[] = []
  const retiring = new Set<() => Promise<void>>()
  let closed = false

  const workFile = (ref: R2SqlRef) => join(root, 'work', instanceId, ref.projectId, `${ref.id}.db`)
  const cacheFile = (ref: R2SqlRef, version: number) => join(root, 'published', ref.projectId, ref.id, `${version}.db`)
  const objectKey = (ref: R2SqlRef, version: number) => `r2-sql/${ref.projectId}/${ref.id}/${version}.db`
  const missing = () => new AppError('collection_not_found', 'The collection has no published file')
  const heldElsewhere = () =>
    new AppError('conflict', 'Another instance holds unpublished writes to this collection; they are published on the next schedule tick (or POST /publish), after which this instance may write', {
      reason: 'writer_elsewhere',
    })

  function localOf(ref: R2SqlRef): Local {
    let local = locals.get(ref.id)
    if (!local) {
      local = { ref, work: null, claim: null, lastWriteAt: 0, publishedMarker: null, published: null, opening: new Map(), chain: Promise.resolve() }
      locals.set(ref.id, local)
    }
    return local
  }

  /** Runs `run` after every earlier claim, publish or drop of the collection on this instance. */
  function serial<T>(local: Local, run: () => Promise<T>): Promise<T> {
    const result = local.chain.then(run)
    local.chain = result.catch(() => {})
    return result
  }

  function openCopy(file: string, copy: string, readonly: boolean): Copy {
    const db = openSqlite(file, { readonly })
    return { handle: { kind: 'sqlite', db, schema: null, copy }, root: db }
  }

  const openWork = (ref: R2SqlRef) => openCopy(workFile(ref), `work:${instanceId}`, false)

  /** What moves with every row written (this connection's total_changes) and every schema change. */
  async function markerOf(copy: Copy): Promise<string> {
    const { rows } = await sql<{ c: number; s: number }>`select total_changes() as c, (select schema_version from pragma_schema_version) as s`.execute(copy.root)
    return `${rows[0]!.c}/${rows[0]!.s}`
  }

  async function baseOf(copy: Copy): Promise<number> {
    const { rows } = await sql<{ user_version: number }>`pragma user_version`.execute(copy.root)
    return Number(rows[0]!.user_version)
  }

  function removeFile(file: string): void {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
  }

  /** A consistent copy of the working copy, self-contained (no WAL), labelled with its version: a temp file. */
  async function snapshot(work: Copy, version: number): Promise<{ file: string; sizeBytes: number }> {
    const file = join(root, 'tmp', `${newId()}.db`)
    mkdirSync(dirname(file), { recursive: true })
    await sql`vacuum into ${file}`.execute(work.root)
    const raw = new Database(file)
    try {
      raw.pragma('journal_mode = DELETE')
      raw.pragma(`user_version = ${version}`)
    } finally {
      raw.close()
    }
    return { file, sizeBytes: statSync(file).size }
  }

  /** The published file of a version in the local cache, downloaded if absent (temp file, then renamed: other instances may share the cache). */
  async function fetchVersion(ref: R2SqlRef, version: number): Promise<string> {
    const file = cacheFile(ref, version)
    if (existsSync(file)) return file
    const body = await storage.get(objectKey(ref, version))
    if (!body) throw new AppError('service_unavailable', 'The published file of this collection is missing from object storage', { version })
    const tmp = join(root, 'tmp', `${newId()}.db`)
    mkdirSync(dirname(tmp), { recursive: true })
    try {
      await pipeline(body, createWriteStream(tmp))
      mkdirSync(dirname(file), { recursive: true })
      renameSync(tmp, file)
    } catch (err) {
      rmSync(tmp, { force: true })
      throw err
    }
    return file
  }

  /**
   * Closes and removes this instance's copies of a collection (dropped here, or found gone: deleted by
   * another instance, whose drop reached only its own copies and object storage).
   */
  async function forgetLocal(ref: R2SqlRef, local: Local): Promise<void> {
    const copies = [local.work, local.published].filter((c): c is Copy => c !== null)
    local.work = null
    local.published = null
    local.claim = null
    locals.delete(ref.id)
    for (const copy of copies) await copy.root.destroy().catch(() => {})
    removeFile(workFile(ref))
    rmSync(join(root, 'published', ref.projectId, ref.id), { recursive: true, force: true })
  }

  /** Closes a copy once reads that may still hold it are done (they hold it for one request). */
  function retire(copy: Copy, file?: string): void {
    let cancel = () => {}
    const finish = async () => {
      cancel()
      retiring.delete(finish)
      await copy.root.destroy().catch(() => {})
      if (file) removeFile(file)
    }
    retiring.add(finish)
    cancel = clock.after(60_000, () => void finish())
  }

  /** The working copy starts again from a published version. */
  async function resetWork(ref: R2SqlRef, local: Local, version: number): Promise<Copy> {
    const source = await fetchVersion(ref, version)
    if (local.work) await local.work.root.destroy()
    local.work = null
    const file = workFile(ref)
    removeFile(file)
    mkdirSync(dirname(file), { recursive: true })
    copyFileSync(source, file)
    const work = openWork(ref)
    local.work = work
    local.publishedMarker = await markerOf(work)
    return work
  }

  function claimValid(local: Local, margin: number): boolean {
    return local.claim !== null && local.work !== null && local.claim.leaseUntil - margin > clock.now()
  }

  /** Takes (or renews) the writer claim and answers the working copy. Throws conflict when another instance holds it. */
  async function claim(ref: R2SqlRef, local: Local): Promise<Copy> {
    if (claimValid(local, leaseMs / 2)) {
      local.lastWriteAt = clock.now()
      return local.work!
    }
    return serial(local, async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = await store.get(ref.id)
        if (!row) {
          await forgetLocal(ref, local)
          throw missing()
        }
        const now = clock.now()
        if (row.writer !== null && row.writer !== instanceId && (row.lease_until ?? 0) > now) throw heldElsewhere()
        const token = newId()
        if (!(await store.claim(ref.id, { token: row.writer_token }, { writer: instanceId, token, leaseUntil: now + leaseMs }))) continue
        // The working copy goes on from where it is when it is at the published version (this instance's
        // own writes on it are kept); otherwise it starts again from the published file.
        if (!local.work && existsSync(workFile(ref))) local.work = openWork(ref)
        if (!local.work || (await baseOf(local.work)) !== row.version) await resetWork(ref, local, row.version)
        local.claim = { token, leaseUntil: now + leaseMs }
        local.lastWriteAt = now
        return local.work!
      }
      throw heldElsewhere()
    })
  }

  async function readCopy(ref: R2SqlRef, local: Local): Promise<Copy> {
    if (claimValid(local, 0)) return local.work!
    const row = await store.get(ref.id)
    if (!row) {
      await serial(local, () => forgetLocal(ref, local))
      throw missing()
    }
    // Writes this instance holds from before a restart: it is still the writer, and reads its own copy.
    if (row.writer === instanceId && (row.lease_until ?? 0) > clock.now()) return claim(ref, local)
    if (local.published?.version === row.version) return local.published
    let opening = local.opening.get(row.version)
    if (!opening) {
      const version = row.version
      opening = (async () => {
        const copy = { ...openCopy(await fetchVersion(ref, version), `published:${version}`, true), version }
        const before = local.published
        if (!before || before.version < version) {
          local.published = copy
          if (before) retire(before, cacheFile(ref, before.version))
        } else retire(copy)
        return copy
      })()
      local.opening.set(version, opening)
      void opening.then(
        () => local.opening.delete(version),
        () => local.opening.delete(version),
      )
    }
    return opening
  }

  /** Publishes this instance's unpublished writes, if it holds the claim. */
  function publishHere(ref: R2SqlRef, local: Local, release: 'quiet' | 'always' = 'quiet'): Promise<PublishResult | null> {
    return serial(local, async () => {
      const row = await store.get(ref.id)
      if (!row) throw missing()
      const claimed = local.claim
      if (!claimed || !local.work || row.writer_token !== claimed.token) {
        local.claim = null
        return null
      }
      const work = local.work
      const before = await markerOf(work)
      if (before === local.publishedMarker) {
        await releaseIfQuiet(ref, local, before, release)
        return { published: false, version: row.version, sizeBytes: row.size_bytes, publishedAt: row.published_at }
      }
      const version = row.version + 1
      const { file, sizeBytes } = await snapshot(work, version)
      const key = objectKey(ref, version)
      const publishedAt = clock.seconds()
      try {
        await storage.put(key, createReadStream(file), { contentType, sizeBytes })
        if (!(await store.published(ref.id, claimed.token, { version, sizeBytes, publishedAt }))) {
          // The lease ran out and another instance took the claim: its version stands, not this one.
          local.claim = null
          await storage.delete(key).catch(() => {})
          throw heldElsewhere()
        }
      } catch (err) {
        rmSync(file, { force: true })
        throw err
      }
      mkdirSync(dirname(cacheFile(ref, version)), { recursive: true })
      renameSync(file, cacheFile(ref, version))
      await sql`pragma user_version = ${sql.raw(String(version))}`.execute(work.root)
      local.publishedMarker = before
      // Readers look the version up on every read: none starts on the one before the previous any more.
      if (version > 2) await storage.delete(objectKey(ref, version - 2)).catch((err: unknown) => log.warn({ err, collectionId: ref.id }, 'removing an old r2_sql version failed'))
      await releaseIfQuiet(ref, local, before, release)
      log.info({ collectionId: ref.id, version, sizeBytes }, 'r2_sql collection published')
      return { published: true, version, sizeBytes, publishedAt }
    })
  }

  /** Gives the claim up when nothing was written since the snapshot and no write handle was handed out lately. */
  async function releaseIfQuiet(ref: R2SqlRef, local: Local, published: string, release: 'quiet' | 'always'): Promise<void> {
    if (!local.claim || !local.work || (release === 'quiet' && clock.now() - local.lastWriteAt < quietMs)) return
    if ((await markerOf(local.work)) !== published) return
    const { token } = local.claim
    local.claim = null
    await store.release(ref.id, token)
  }

  async function publishHeld(release: 'quiet' | 'always' = 'quiet'): Promise<void> {
    for (const local of locals.values()) {
      if (!local.claim) continue
      await publishHere(local.ref, local, release).catch((err: unknown) => log.error({ err, collectionId: local.ref.id }, 'publishing an r2_sql collection failed'))
    }
  }

  async function onPublishRequest(message: string): Promise<void> {
    const request = JSON.parse(message) as { all?: boolean; requestId?: string; projectId?: string; collectionId?: string }
    if (request.all) return publishHeld('quiet')
    if (!request.collectionId || !request.projectId || !request.requestId) return
    const local = locals.get(request.collectionId)
    if (!local?.claim) return
    const ref = { projectId: request.projectId, id: request.collectionId }
    try {
      const result = await publishHere(ref, local)
      if (result) await options.pubsub.publish(replyChannel, JSON.stringify({ requestId: request.requestId, result }))
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'service_unavailable'
      await options.pubsub.publish(replyChannel, JSON.stringify({ requestId: request.requestId, error: { code, message: err instanceof Error ? err.message : 'failed' } }))
    }
  }

  function onReply(message: string): void {
    const reply = JSON.parse(message) as { requestId: string; result?: PublishResult; error?: { code: string; message: string } }
    const waiter = waiting.get(reply.requestId)
    if (!waiter) return
    waiting.delete(reply.requestId)
    if (reply.result) waiter.resolve(reply.result)
    else waiter.reject(new AppError(reply.error?.code === 'conflict' ? 'conflict' : 'service_unavailable', reply.error?.message ?? 'Publishing failed'))
  }

  const current = (row: R2SqlFileRow): PublishResult => ({ published: false, version: row.version, sizeBytes: row.size_bytes, publishedAt: row.published_at })

  return {
    async start() {
      // Cached versions of collections deleted meanwhile (by this instance before a crash, or by another).
      const published = join(root, 'published')
      for (const projectId of existsSync(published) ? readdirSync(published) : []) {
        for (const id of readdirSync(join(published, projectId))) {
          if (!(await store.get(id))) rmSync(join(published, projectId, id), { recursive: true, force: true })
        }
      }
      unsubscribes.push(
        await options.pubsub.subscribe(publishChannel, (m) => {
          void onPublishRequest(m).catch((err: unknown) => log.error({ err }, 'r2_sql publish request failed'))
        }),
      )
      unsubscribes.push(await options.pubsub.subscribe(replyChannel, onReply))
    },

    async create(ref, make) {
      const local = localOf(ref)
      await serial(local, async () => {
        removeFile(workFile(ref))
        const work = openWork(ref)
        local.work = work
        await make(work.handle)
        const { file, sizeBytes } = await snapshot(work, 1)
        try {
          await storage.put(objectKey(ref, 1), createReadStream(file), { contentType, sizeBytes })
          await store.insert({ collection_id: ref.id, project_id: ref.projectId, version: 1, size_bytes: sizeBytes, published_at: clock.seconds(), writer: null, writer_token: null, lease_until: null })
        } catch (err) {
          rmSync(file, { force: true })
          throw err
        }
        mkdirSync(dirname(cacheFile(ref, 1)), { recursive: true })
        renameSync(file, cacheFile(ref, 1))
        await sql`pragma user_version = 1`.execute(work.root)
        local.publishedMarker = await markerOf(work)
      })
    },

    async handle(ref, intent) {
      if (closed) throw new AppError('service_unavailable', 'Shutting down')
      const local = localOf(ref)
      return (intent === 'write' ? await claim(ref, local) : await readCopy(ref, local)).handle
    },

    async publish(ref) {
      const local = localOf(ref)
      if (local.claim) {
        const here = await publishHere(ref, local)
        if (here) return here
      }
      const row = await store.get(ref.id)
      if (!row) throw missing()
      if (row.writer === null || (row.lease_until ?? 0) <= clock.now()) return current(row)
      if (row.writer === instanceId) {
        await claim(ref, local)
        return (await publishHere(ref, local)) ?? current((await store.get(ref.id)) ?? row)
      }
      // Another instance holds the writes: ask it, and wait for its answer.
      const requestId = newId()
      const answered = new Promise<PublishResult>((resolve, reject) => waiting.set(requestId, { resolve, reject }))
      await options.pubsub.publish(publishChannel, JSON.stringify({ requestId, projectId: ref.projectId, collectionId: ref.id }), { awaitDelivery: true })
      const timeout = new AbortController()
      try {
        return await Promise.race([
          answered,
          clock.sleep(answerMs, timeout.signal).then(() => {
            throw new AppError('service_unavailable', 'The instance holding the unpublished writes did not publish them in time', { reason: 'writer_unresponsive' })
          }),
        ])
      } finally {
        timeout.abort()
        waiting.delete(requestId)
      }
    },

    publishHeld: () => publishHeld('quiet'),

    async publishEverywhere() {
      await options.pubsub.publish(publishChannel, JSON.stringify({ all: true }))
    },

    async drop(ref) {
      const local = localOf(ref)
      await serial(local, async () => {
        await forgetLocal(ref, local)
        for (const key of await storage.list(`r2-sql/${ref.projectId}/${ref.id}/`, 1000)) await storage.delete(key)
        await store.delete(ref.id)
      })
    },

    async close() {
      if (closed) return
      closed = true
      // Writes this instance holds are published, and its claims given up, before it goes: a restart (or
      // another instance) finds them, and nobody waits for a lease to run out.
      await publishHeld('always')
      for (const unsubscribe of unsubscribes) await unsubscribe().catch(() => {})
      for (const finish of [...retiring]) await finish()
      for (const local of locals.values()) {
        await local.chain
        for (const copy of [local.work, local.published]) await copy?.root.destroy().catch(() => {})
      }
      locals.clear()
    },
  }
}
