import type { DestinationStream } from 'pino'
import type { Clock } from '../lib/clock.js'
import type { DatabaseRegistry } from '../lib/db/index.js'
import type { OutboundOptions } from '../lib/outbound/index.js'
import type { ObjectStorage } from '../lib/storage/index.js'
import type { OperationRegistry } from '../modules/operations/index.js'
import type { RealtimeOptions } from '../modules/realtime/index.js'
import type { ImportPacePoint } from '../modules/records/index.js'
import type { DocsIndex } from '../modules/mcp/index.js'
import type { DeliveryOptions } from '../modules/webhooks/index.js'

export interface AppOptions {
  /** Where log lines go (stdout by default); tests capture them. */
  logDestination?: DestinationStream
  clock?: Clock
  /** Awaited before every batch of a background structure scan or repair job; tests hold jobs mid-run with it. */
  structureJobPace?: () => Promise<void>
  /** Awaited at fixed points of every NDJSON import write; tests hold or fail a chunk there (crash, race). */
  importPace?: (point: ImportPacePoint) => Promise<void>
  /** Realtime stream tuning (heartbeat interval, slow-client buffer cap); tests shorten them. */
  realtime?: RealtimeOptions
  /** Wraps the object storage the files module uses; tests inject storage faults with it. */
  filesStorage?: (storage: ObjectStorage) => ObjectStorage
  /** Awaited after a session's or API key's database reads, before the result is cached; tests hold a load there to race an invalidation against it. */
  credentialLoadPace?: (kind: 'session' | 'api_key') => Promise<void>
  /** Wraps the database registry the collections module (and records, through it) uses; tests inject DDL faults with it. */
  collectionDatabases?: (registry: DatabaseRegistry) => DatabaseRegistry
  /** r2_sql timings (decision 036); tests shorten the quiet period after which a publish gives the writer claim up, or move the schedule out of their way. */
  r2Sql?: { quietMs?: number; publishPattern?: string }
  /** Wraps the operations registry flows are checked against; tests add operation types with it. */
  operations?: (registry: OperationRegistry) => OperationRegistry
  /** Outbound test hooks (lib/outbound: made-up names, a narrowed address rule); production passes none. */
  outbound?: Pick<OutboundOptions, 'resolve' | 'isBlocked'>
  /** Collection webhook retry tuning (tests shorten the backoff). */
  webhookDelivery?: Partial<DeliveryOptions>
  /** The docs index search_docs and get_doc_page read (tests pass a small fake); the project's docs/ pages otherwise. */
  mcpDocs?: DocsIndex
}
