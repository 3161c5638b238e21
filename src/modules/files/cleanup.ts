import { idPattern } from '../../lib/ids.js'
import type { Principal } from '../../lib/principal.js'
import { actingPrincipalOf, type RecordEvent } from '../records/index.js'
import type { FilesContext } from './context.js'
import { limits, type FileRow } from './model.js'

/** Pending uploads older than this are abandoned: their rows and any bytes that arrived are removed. */
const abandonedAfterSeconds = 3600
/**
 * A confirmed file's upload key goes once its URL is certainly dead: 15 minutes after it expired, the
 * clock skew S3-compatible stores tolerate (they check a presigned URL's expiry by their own clock).
 */
const uploadKeyKeptSeconds = limits.uploadUrlSeconds + 15 * 60
const sweepEveryMs = 10 * 60_000
const collectionPage = 200

/**
 * What removes files without a request for them: permanently deleted records and removed collections take
 * their files, and a sweep clears uploads never confirmed.
 *
 * A file goes with a record or a collection only when all of these hold (decision 011):
 * - it is attached to that collection (a file of another collection or of `__system` never goes this way);
 * - the acting principal could delete it itself through DELETE /files/:id (it sees the file and holds
 *   system/files:delete over it): a record naming someone else's file is no way to delete that file;
 * - no record of the project holds it in a file field any more (any collection, soft-deleted records too,
 *   since they can be restored).
 * Otherwise it stays: attached to its collection when a record went, to `__system` when its collection went.
 */
export function createCleanup(ctx: FilesContext) {
  const { deps, store, access } = ctx

  /** Of a project's files, those the principal takes away with what it removed; none without a principal. */
  async function removable(
    projectId: string,
    principal: Principal | undefined,
    rows: readonly FileRow[],
  ): Promise<FileRow[]> {
    if (!principal || rows.length === 0) return []
    const deletable = await access.deletable(principal, rows)
    if (deletable.length === 0) return []
    let held: ReadonlySet<string>
    try {
      held = await deps.referencedFiles(
        projectId,
        deletable.map((row) => row.id),
      )
    } catch (err) {
      // A collection that cannot be asked (its database unreachable) might still hold them: keep them all.
      deps.log.warn({ err, projectId }, 'could not check which files records still hold; keeping them')
      return []
    }
    return deletable.filter((row) => !held.has(row.id))
  }

  async function remove(row: FileRow, what: string): Promise<void> {
    try {
      await ctx.removeObjects(row)
      await store.remove(row.project_id, row.id)
    } catch (err) {
      deps.log.warn({ err, fileId: row.id }, `could not remove a file of ${what}`)
    }
  }

  async function onRecordDelete(event: RecordEvent): Promise<void> {
    if (event.permanent !== true || !event.before) return
    const collection = await deps.collections.find(event.projectId, event.collection)
    if (!collection) return
    const ids = collection.fields
      .filter((f) => f.type === 'file')
      .map((f) => event.before![f.name])
      .filter((v): v is string => typeof v === 'string' && idPattern.test(v))
    const attached = await store.inCollection(event.projectId, event.collection, [...new Set(ids)])
    for (const row of await removable(event.projectId, actingPrincipalOf(event), attached))
      await remove(row, 'a permanently deleted record')
  }

  // Record deletes are handled one after another, in publication order, so a later delete's files are
  // settled only after an earlier one's (a caller can wait for one to know the others are done).
  let queue: Promise<void> = Promise.resolve()
  function enqueue(event: RecordEvent): void {
    queue = queue
      .then(() => onRecordDelete(event))
      .catch((err: unknown) => deps.log.warn({ err }, 'removing the files of a deleted record failed'))
  }

  /**
   * Settles the files attached to these collections, which are gone (dropped, or gone with their database
   * binding), under the rule above: removed, or kept and attached to `__system`.
   */
  async function removeOfCollections(
    principal: Principal,
    projectId: string,
    collections: readonly string[],
  ): Promise<void> {
    let after = ''
    for (;;) {
      const rows = await store.ofCollections(projectId, collections, after, collectionPage)
      const going = new Set(await removable(projectId, principal, rows))
      for (const row of going) await remove(row, 'a removed collection')
      await store.detach(
        projectId,
        rows.filter((row) => !going.has(row)).map((row) => row.id),
        deps.clock.seconds(),
      )
      if (rows.length < collectionPage) return
      after = rows[rows.length - 1]!.id
    }
  }

  /**
   * Abandoned uploads and the keys of dead upload URLs, wherever their bytes live. One file whose storage
   * fails (a connection's store down) is logged and left for the next sweep; it never stops the others.
   */
  async function sweep(): Promise<void> {
    const rows = await store.abandonedAcrossProjects(deps.clock.seconds() - abandonedAfterSeconds, 100)
    for (const row of rows) await remove(row, 'an abandoned upload')
    // The keys dead upload URLs wrote to: never served, and what a PUT after confirm left there goes too.
    // Every token upload leaves one, so each sweep clears them all, a page at a time (while pages move).
    for (let page = 100, cleared = 1; page === 100 && cleared > 0; ) {
      const held = await store.uploadKeysAcrossProjects(deps.clock.seconds() - uploadKeyKeptSeconds, 100)
      cleared = 0
      for (const row of held) {
        try {
          // Never the served object (a confirmed file's r2_key is its copy; kept as a guard). A file whose
          // connection is gone has nothing left to remove.
          const storage = await ctx.placement.placedStorage(row)
          if (storage && row.upload_key !== row.r2_key) await storage.delete(row.upload_key!)
          await store.dropUploadKey(row.project_id, row.id, row.upload_key!)
          cleared++
        } catch (err) {
          deps.log.warn({ err, fileId: row.id }, "could not remove a dead upload URL's key")
        }
      }
      page = held.length
    }
  }

  const unsubscribe = deps.events.on('record.delete', enqueue)
  const ticker = deps.clock.every(sweepEveryMs, sweep, {
    onError: (err) => deps.log.warn({ err }, 'abandoned upload sweep failed'),
  })

  return {
    sweep,
    removeOfCollections,
    /** Stops listening and sweeping; resolves once a sweep under way and the record deletes already received are settled. */
    async close(): Promise<void> {
      await ticker.stop()
      unsubscribe()
      await queue
    },
  }
}
