import { copyFileSync, createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { sql } from 'kysely'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import type { Unsubscribe } from '../../../lib/pubsub/index.js'
import { createR2SqlCopies, type Copy } from './copies.js'
import { createR2SqlFilesStore, type R2SqlFileRow } from './files-store.js'
import { createPublishRequests } from './publish-requests.js'
import type { PublishResult, R2Sql, R2SqlOptions, R2SqlRef } from './types.js'

export type { PublishResult, R2Sql, R2SqlOptions, R2SqlRef } from './types.js'

/** This instance's state of one collection: its copies, its claim, and the chain its claims, publishes and drops wait on. */
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

const contentType = 'application/vnd.sqlite3'
const instancePattern = /^[A-Za-z0-9_-]{1,64}$/

/** The r2_sql files of every collection on this instance (types.ts says how claims and publishing work). */
export function createR2Sql(options: R2SqlOptions): R2Sql & { start(): Promise<void> } {
  const { storage, clock, log, instanceId } = options
  if (!instancePattern.test(instanceId)) throw new Error('r2_sql: the instance id must be 1-64 letters, digits, _ or -')
  const leaseMs = options.leaseMs ?? 600_000
  const quietMs = options.quietMs ?? 30_000
  const answerMs = options.answerMs ?? 30_000
  const store = createR2SqlFilesStore(options.systemDb)
  const root = join(options.dataDir, 'r2-sql')
  const locals = new Map<string, Local>()
  const unsubscribes: Unsubscribe[] = []
  const retiring = new Set<() => Promise<void>>()
  let closed = false

  const { workFile, cacheFile, objectKey, openCopy, openWork, markerOf, baseOf, removeFile, snapshot, fetchVersion } =
    createR2SqlCopies(root, instanceId, storage)
  const missing = () => new AppError('collection_not_found', 'The collection has no published file')
  const heldElsewhere = () =>
    new AppError(
      'conflict',
      'Another instance holds unpublished writes to this collection; they are published on the next schedule tick (or POST /publish), after which this instance may write',
      {
        reason: 'writer_elsewhere',
      },
    )

  function localOf(ref: R2SqlRef): Local {
    let local = locals.get(ref.id)
    if (!local) {
      local = {
        ref,
        work: null,
        claim: null,
        lastWriteAt: 0,
        publishedMarker: null,
        published: null,
        opening: new Map(),
        chain: Promise.resolve(),
      }
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
        if (
          !(await store.claim(
            ref.id,
            { token: row.writer_token },
            { writer: instanceId, token, leaseUntil: now + leaseMs },
          ))
        )
          continue
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
  function publishHere(
    ref: R2SqlRef,
    local: Local,
    release: 'quiet' | 'always' = 'quiet',
  ): Promise<PublishResult | null> {
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
      if (version > 2)
        await storage
          .delete(objectKey(ref, version - 2))
          .catch((err: unknown) => log.warn({ err, collectionId: ref.id }, 'removing an old r2_sql version failed'))
      await releaseIfQuiet(ref, local, before, release)
      log.info({ collectionId: ref.id, version, sizeBytes }, 'r2_sql collection published')
      return { published: true, version, sizeBytes, publishedAt }
    })
  }

  /** Gives the claim up when nothing was written since the snapshot and no write handle was handed out lately. */
  async function releaseIfQuiet(
    ref: R2SqlRef,
    local: Local,
    published: string,
    release: 'quiet' | 'always',
  ): Promise<void> {
    if (!local.claim || !local.work || (release === 'quiet' && clock.now() - local.lastWriteAt < quietMs)) return
    if ((await markerOf(local.work)) !== published) return
    const { token } = local.claim
    local.claim = null
    await store.release(ref.id, token)
  }

  async function publishHeld(release: 'quiet' | 'always' = 'quiet'): Promise<void> {
    for (const local of locals.values()) {
      if (!local.claim) continue
      await publishHere(local.ref, local, release).catch((err: unknown) =>
        log.error({ err, collectionId: local.ref.id }, 'publishing an r2_sql collection failed'),
      )
    }
  }

  const requests = createPublishRequests({
    pubsub: options.pubsub,
    clock,
    log,
    answerMs,
    publishIfHeld: async (ref) => {
      const local = locals.get(ref.id)
      return local?.claim ? publishHere(ref, local) : null
    },
    publishHeld: () => publishHeld('quiet'),
  })

  const current = (row: R2SqlFileRow): PublishResult => ({
    published: false,
    version: row.version,
    sizeBytes: row.size_bytes,
    publishedAt: row.published_at,
  })

  return {
    async start() {
      // Cached versions of collections deleted meanwhile (by this instance before a crash, or by another).
      const published = join(root, 'published')
      for (const projectId of existsSync(published) ? readdirSync(published) : []) {
        for (const id of readdirSync(join(published, projectId))) {
          if (!(await store.get(id))) rmSync(join(published, projectId, id), { recursive: true, force: true })
        }
      }
      unsubscribes.push(...(await requests.subscribe()))
    },

    async create(ref, make, register) {
      const local = localOf(ref)
      await serial(local, async () => {
        removeFile(workFile(ref))
        const work = openWork(ref)
        local.work = work
        await make(work.handle)
        const { file, sizeBytes } = await snapshot(work, 1)
        try {
          await storage.put(objectKey(ref, 1), createReadStream(file), { contentType, sizeBytes })
          const version = {
            collection_id: ref.id,
            project_id: ref.projectId,
            version: 1,
            size_bytes: sizeBytes,
            published_at: clock.seconds(),
            writer: null,
            writer_token: null,
            lease_until: null,
          }
          await options.systemDb.transaction().execute(async (trx) => {
            await register?.(trx)
            await store.insert(version, trx)
          })
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
      return requests.ask(ref)
    },

    publishHeld: () => publishHeld('quiet'),

    publishEverywhere: () => requests.everywhere(),

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
