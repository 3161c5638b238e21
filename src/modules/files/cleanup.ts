import { idPattern } from '../../lib/ids.js'
import type { RecordEvent } from '../records/index.js'
import type { FilesContext } from './context.js'
import { limits } from './model.js'

/** Pending uploads older than this are abandoned: their rows and any bytes that arrived are removed. */
const abandonedAfterSeconds = 3600
/**
 * A confirmed file's upload key goes once its URL is certainly dead: 15 minutes after it expired, the
 * clock skew S3-compatible stores tolerate (they check a presigned URL's expiry by their own clock).
 */
const uploadKeyKeptSeconds = limits.uploadUrlSeconds + 15 * 60
const sweepEveryMs = 10 * 60_000

/**
 * What removes files without a request for them: a permanent record delete takes the files named in its
 * `file` fields (attached to that collection), and a sweep clears uploads never confirmed.
 */
export function createCleanup(ctx: FilesContext) {
  const { deps, store } = ctx

  async function onRecordDelete(event: RecordEvent): Promise<void> {
    if (event.permanent !== true || !event.before) return
    const collection = await deps.collections.find(event.projectId, event.collection)
    if (!collection) return
    const ids = collection.fields
      .filter((f) => f.type === 'file')
      .map((f) => event.before![f.name])
      .filter((v): v is string => typeof v === 'string' && idPattern.test(v))
    for (const row of await store.inCollection(event.projectId, event.collection, [...new Set(ids)])) {
      try {
        await ctx.removeObjects(row)
        await store.remove(row.project_id, row.id)
      } catch (err) {
        deps.log.warn({ err, fileId: row.id }, 'could not remove a file of a permanently deleted record')
      }
    }
  }

  /** Removes every file attached to these collections (dropped, or gone with their database binding). */
  async function removeOfCollections(projectId: string, collections: readonly string[]): Promise<void> {
    let after = ''
    for (;;) {
      const rows = await store.ofCollections(projectId, collections, after, 200)
      for (const row of rows) {
        try {
          await ctx.removeObjects(row)
          await store.remove(row.project_id, row.id)
        } catch (err) {
          deps.log.warn({ err, fileId: row.id }, 'could not remove a file of a removed collection')
        }
      }
      if (rows.length < 200) return
      after = rows[rows.length - 1]!.id
    }
  }

  async function sweep(): Promise<void> {
    const rows = await store.abandonedAcrossProjects(deps.clock.seconds() - abandonedAfterSeconds, 100)
    for (const row of rows) {
      await ctx.removeObjects(row)
      await store.remove(row.project_id, row.id)
    }
    // The keys dead upload URLs wrote to: never served, and what a PUT after confirm left there goes too.
    // Every token upload leaves one, so each sweep clears them all, a page at a time.
    for (let page = 100; page === 100; ) {
      const held = await store.uploadKeysAcrossProjects(deps.clock.seconds() - uploadKeyKeptSeconds, 100)
      for (const row of held) {
        // Never the served object (a confirmed file's r2_key is its copy; kept as a guard).
        if (row.upload_key !== row.r2_key) await deps.storage.delete(row.upload_key!)
        await store.dropUploadKey(row.project_id, row.id, row.upload_key!)
      }
      page = held.length
    }
  }

  const unsubscribe = deps.events.on('record.delete', onRecordDelete)
  const timer = setInterval(() => {
    sweep().catch((err: unknown) => deps.log.warn({ err }, 'abandoned upload sweep failed'))
  }, sweepEveryMs)
  timer.unref()

  return {
    sweep,
    removeOfCollections,
    close(): void {
      clearInterval(timer)
      unsubscribe()
    },
  }
}
