import type { AccessService } from '../modules/access/index.js'
import type { ApiKeysService } from '../modules/apikeys/index.js'
import type { AuditService } from '../modules/audit/index.js'
import type { BlueprintsService } from '../modules/blueprints/index.js'
import type { Recovery } from '../modules/auth/index.js'
import type { FlowsService, QuotasService, RunsService, ScriptsService, Triggers } from '../modules/automate/index.js'
import type { CapabilityTokensService } from '../modules/capability-tokens/index.js'
import type { CollectionsService } from '../modules/collections/index.js'
import type { DatabasesService } from '../modules/databases/index.js'
import type { EmailService } from '../modules/email/index.js'
import type { FilesService } from '../modules/files/index.js'
import type { LensAttachmentsService } from '../modules/lens-attachments/index.js'
import type { LensesService } from '../modules/lenses/index.js'
import type { NavigationService } from '../modules/navigation/index.js'
import type { ContainersService } from '../modules/containers/index.js'
import type { McpService } from '../modules/mcp/index.js'
import type { NotificationsService } from '../modules/notifications/index.js'
import type { OperationsService } from '../modules/operations/index.js'
import type { ProjectsService } from '../modules/projects/index.js'
import type { Realtime } from '../modules/realtime/index.js'
import type {
  BulkDelete,
  GeoImporter,
  ImportJobs,
  Publish,
  RecordExporter,
  RecordImporter,
  RecordsService,
  SharesService,
  Transfer,
  Truncate,
} from '../modules/records/index.js'
import type { RenderersService } from '../modules/renderers/index.js'
import type { SearchIndexesService } from '../modules/search-indexes/index.js'
import type { SettingsService } from '../modules/settings/index.js'
import type { StorageConnectionsService } from '../modules/storage-connections/index.js'
import type { StructureService } from '../modules/structure/index.js'
import type { UsersService } from '../modules/users/index.js'
import type { ViewsService } from '../modules/views/index.js'
import type { RolePreviewService } from '../modules/role-preview/index.js'
import type { WebhooksService } from '../modules/webhooks/index.js'
import type { AppModules } from './modules.js'

/** Every module's service, as in-process callers (flows, tools, tests) reach them; each checks the acting principal itself. */
export interface PlinthServices {
  readonly access: AccessService
  readonly users: UsersService
  readonly settings: SettingsService
  readonly audit: AuditService
  readonly projects: ProjectsService
  readonly databases: DatabasesService
  readonly storageConnections: StorageConnectionsService
  readonly collections: CollectionsService
  readonly structure: StructureService
  readonly records: RecordsService
  readonly shares: SharesService
  readonly dataTools: {
    readonly bulk: BulkDelete
    readonly transfer: Transfer
    readonly truncate: Truncate
    readonly publish: Publish
  }
  readonly exchange: {
    readonly exporter: RecordExporter
    readonly importer: RecordImporter
    readonly geoImporter: GeoImporter
    readonly jobs: ImportJobs
  }
  readonly files: FilesService
  readonly capabilityTokens: CapabilityTokensService
  readonly apiKeys: ApiKeysService
  readonly recovery: Recovery
  readonly realtime: Realtime
  /** The automation operations catalog: save-time step checks and run-time config preparation. */
  readonly operations: OperationsService
  /** Automation flows (drafts, versions, runAs, export and import). */
  readonly automate: FlowsService
  /** Automation quotas: limits and usage per project. */
  readonly quotas: QuotasService
  /** Automation runs: execute, dry runs, the runs API. */
  readonly runs: RunsService
  /** Automation triggers in process: manual, webhook and api_endpoint calls, and startSubFlow (trigger_flow). */
  readonly triggers: Triggers
  /** Automation saved scripts (CRUD and test runs). */
  readonly scripts: ScriptsService
  /** Collection webhooks (CRUD, the delivery log); deliveries go through the queue. */
  readonly webhooks: WebhooksService
  /** Email: send_email's sending, the message delivery log (query_message_log), signed receipts. */
  readonly email: EmailService
  /** Search indexes: definitions, builds into SQLite FTS5 files in object storage, queries (decision 042). */
  readonly searchIndexes: SearchIndexesService
  /** In-app notifications: each user's inbox, and sending into one (send_notification, the system flows). */
  readonly notifications: NotificationsService
  /** Lenses: drafts, published versions, renders as the caller (issue 17, item 5). */
  readonly lenses: LensesService
  readonly navigation: NavigationService
  /** Renderers: presentation templates for one collection's records, rendered as the caller (decision 065). */
  readonly renderers: RenderersService
  /** Lens attachments: which lens a collection offers on a record or a list (decision 065). */
  readonly lensAttachments: LensAttachmentsService
  /** Saved views: personal or shared ways to look at a collection, listed as the caller (decision 063). */
  readonly views: ViewsService
  /** What a role can see: a page read as a holder of the role, never beyond the caller's own read (decision 079). */
  readonly rolePreview: RolePreviewService
  readonly containers: ContainersService
  /** The tool server (issue 18): tools and resources read as an API key, the rate limit and the invocation log. */
  readonly mcp: McpService
  /** Blueprints: documents validated (issue 30). */
  readonly blueprints: BlueprintsService
}

/** `app.services`: each module's services, taken from the built modules by name. */
export function servicesOf(m: AppModules): PlinthServices {
  return Object.freeze({
    access: m.access.service,
    users: m.users.service,
    settings: m.settings.service,
    audit: m.audit.service,
    projects: m.projects.service,
    databases: m.databases.service,
    storageConnections: m.storageConnections.service,
    collections: m.collections.service,
    structure: m.structure.service,
    records: m.records.service,
    shares: m.records.shares,
    dataTools: m.records.dataTools,
    exchange: m.records.exchange,
    files: m.files.service,
    capabilityTokens: m.capabilityTokens.service,
    apiKeys: m.apiKeys.service,
    recovery: m.auth.recovery,
    realtime: m.realtime.service,
    operations: m.operations.service,
    automate: m.automate.service,
    quotas: m.automate.quotas,
    runs: m.automate.runs,
    triggers: m.automate.triggers,
    scripts: m.automate.scripts,
    webhooks: m.webhooks.service,
    email: m.email.service,
    searchIndexes: m.searchIndexes.service,
    notifications: m.notifications.service,
    lenses: m.lenses.service,
    navigation: m.navigation.service,
    renderers: m.renderers.service,
    lensAttachments: m.lensAttachments.service,
    views: m.views.service,
    rolePreview: m.rolePreview.service,
    containers: m.containers.service,
    mcp: m.mcp.service,
    blueprints: m.blueprints.service,
  })
}
