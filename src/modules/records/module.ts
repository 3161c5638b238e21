import type { Kysely } from 'kysely'
import { createStatisticsPacer } from '../../lib/db/index.js'
import type { WriteVersions } from '../../lib/cache/write-versions.js'
import type { Clock } from '../../lib/clock.js'
import type { EventBus } from '../../lib/events/index.js'
import type { Logger } from '../../lib/log.js'
import type { AppModule } from '../../lib/module.js'
import type { AccessService, GrantFilterCheck } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { CollectionsService } from '../collections/index.js'
import type { SettingsService } from '../settings/index.js'
import type { UsersService } from '../users/index.js'
import type { Observers } from '../../lib/observers.js'
import type { Principal } from '../../lib/principal.js'
import { createRecordAccess } from './access.js'
import { recordAdviceRoutes } from './advice-routes.js'
import { recordAggregateRoutes } from './aggregate-routes.js'
import { createBulkDelete } from './bulk.js'
import type { ReadableFiles } from './context.js'
import { recordDataRoutes } from './data-routes.js'
import { createWriteHooks, type RecordEvents } from './events.js'
import { createFreshness } from './freshness.js'
import { recordExchangeRoutes } from './exchange-routes.js'
import { createRecordExporter } from './export.js'
import { createImportJobs } from './import-jobs.js'
import { createIndexAdvisor } from './index-advice.js'
import { createPlanProbes } from './plan-probes.js'
import { createRecordImporter, type ImportPacePoint } from './import.js'
import { createGeoImporter } from './geo-import.js'
import { recordsRoutes } from './routes.js'
import { createRecordsService } from './service.js'
import { shareRoutes } from './share-routes.js'
import { createSharesService } from './shares.js'
import { createSharesStore } from './shares-store.js'
import { createTransfer } from './transfer.js'
import { createPublish } from './publish.js'
import { createTruncate } from './truncate.js'
import { createSearchIndexSeam } from './search-indexes.js'
import { createUserDirectory } from './user-directory.js'
import { userDeletionCleanup } from './user-relations.js'

export interface RecordsModuleDeps {
  systemDb: Kysely<any>
  collections: CollectionsService
  access: AccessService
  /** Where this module registers the check of grant row filters naming a collection (access.grantFilterChecks). */
  grantFilterChecks: Observers<Parameters<GrantFilterCheck>>
  settings: SettingsService
  users: UsersService
  /** Where this module registers the onDelete of relations to users (users.beforeDelete, decision 061). */
  userDeletes: Observers<[projectId: string, userId: string, actor: Principal]>
  audit: AuditService
  /** Which file ids a caller may read (the files module, built before this one). */
  readableFiles: ReadableFiles
  events: EventBus<RecordEvents>
  /** Per-collection write versions, shared by every instance in scale-out (platform.writeVersions). */
  writeVersions: WriteVersions
  clock: Clock
  log: Logger
  /** Awaited at fixed points of every NDJSON import write; tests hold or fail a chunk there. */
  importPace?: (point: ImportPacePoint) => Promise<void>
}

/**
 * Records of collections: reads, writes and their hooks, shares, bulk delete, transfer, truncate, export
 * and import jobs. `anonymousGate` is the check of routes whose service decides who may do what
 * (collections, records, shares, field options): app.ts makes it `readSecurity`.
 */
export function createRecordsModule(deps: RecordsModuleDeps) {
  const {
    systemDb,
    collections,
    access,
    grantFilterChecks,
    settings,
    users,
    audit,
    readableFiles,
    events,
    clock,
    log,
  } = deps
  const shares = createSharesStore(systemDb)
  const recordAccess = createRecordAccess({ access, shares })
  // A grant naming a collection has its item_filter checked against that collection's fields when saved.
  grantFilterChecks.add(recordAccess.grantFilterCheck(collections))
  const freshness = createFreshness({ versions: deps.writeVersions, clock, log })
  // Search indexes (built after this module) register here: imports and truncates report the indexes they made stale.
  const { seam: searchIndexes, dependents } = createSearchIndexSeam()
  // One pacer for every bulk path: imports, bulk deletes and creates count towards the same refresh.
  const statistics = createStatisticsPacer()
  const recordDeps = {
    collections,
    access,
    recordAccess,
    settings,
    shares,
    readableFiles,
    users: createUserDirectory({ users, access }),
    events,
    hooks: createWriteHooks(),
    freshness,
    advisor: createIndexAdvisor({ log, now: () => clock.now() }),
    planProbes: createPlanProbes(() => clock.now()),
    statistics,
    clock,
    log,
  }
  const service = createRecordsService(recordDeps)
  // Deleting an account applies the onDelete of every relation to users first; restrict refuses it (409).
  deps.userDeletes.add(userDeletionCleanup(recordDeps))
  const { open } = service
  const dataTools = {
    bulk: createBulkDelete(recordDeps, open),
    transfer: createTransfer({
      open,
      users,
      shares,
      collections,
      events,
      hooks: service.hooks,
      freshness,
      audit,
      clock,
    }),
    truncate: createTruncate({ open, collections, shares, audit, freshness, searchIndexes: dependents }),
    publish: createPublish({ collections, recordAccess }),
  }
  const jobs = createImportJobs({ systemDb, open, clock, log, searchIndexes: dependents })
  const importer = createRecordImporter({
    open,
    hooks: service.hooks,
    events,
    freshness,
    jobs,
    searchIndexes: dependents,
    statistics,
    clock,
    log,
    pace: deps.importPace,
  })
  const exchange = {
    exporter: createRecordExporter({ open, log }),
    importer,
    geoImporter: createGeoImporter({ importer }),
    jobs,
  }
  const sharesService = createSharesService({ open, store: shares, users, collections, clock })
  return {
    service,
    shares: sharesService,
    dataTools,
    exchange,
    anonymousGate: recordAccess.anonymousGate(collections),
    /** Where the search indexes module registers (decision 042). */
    searchIndexes,
    routers: ({ security, readSecurity }) => [
      // Before /records/{id}, whose id would otherwise take the word `aggregate`.
      recordAggregateRoutes(service, readSecurity),
      recordAdviceRoutes(service, security),
      recordsRoutes(service, readSecurity),
      recordExchangeRoutes(exchange, readSecurity),
      ...recordDataRoutes(dataTools, security, readSecurity),
      shareRoutes(sharesService, readSecurity),
    ],
    close: () => jobs.close(),
  } satisfies AppModule
}
