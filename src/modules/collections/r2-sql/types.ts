import type { Kysely } from 'kysely'
import type { Clock } from '../../../lib/clock.js'
import type { DbHandle } from '../../../lib/db/index.js'
import type { Logger } from '../../../lib/log.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { ObjectStorage } from '../../../lib/storage/index.js'

/**
 * r2_sql collections (decision 036): each is an SQLite file kept in object storage. One instance at a time
 * holds the writer claim (r2_sql_files.writer, with a lease); its writes go to its local working copy, and
 * its reads too. Every other instance reads the last published version, downloaded once into a local cache
 * and opened read-only. Publishing snapshots the working copy (VACUUM INTO), uploads it as the next version
 * and records that version; a schedule publishes every claim an instance holds, `publish` one on demand
 * (from any instance: the claim's holder is asked over pub/sub).
 */
export interface R2Sql {
  /**
   * Makes the collection's working copy, its table (`make`), and publishes version 1 before answering;
   * `register` writes the collection's registration in the transaction that records version 1, so one is
   * never without the other.
   */
  create(
    ref: R2SqlRef,
    make: (handle: DbHandle) => Promise<void>,
    register?: (trx: Kysely<any>) => Promise<void>,
  ): Promise<void>
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
