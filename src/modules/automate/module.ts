import type { Kysely } from 'kysely'
import type { Clock } from '../../lib/clock.js'
import type { EventBus } from '../../lib/events/index.js'
import type { DbKind } from '../../lib/db/index.js'
import type { AppModule } from '../../lib/module.js'
import type { Logger } from '../../lib/log.js'
import type { Observers } from '../../lib/observers.js'
import type { OutboundClient } from '../../lib/outbound/index.js'
import type { PubSub } from '../../lib/pubsub/index.js'
import type { JobQueue } from '../../lib/queue/index.js'
import type { RateLimiter } from '../../lib/ratelimit/index.js'
import type { Slots } from '../../lib/slots/index.js'
import type { AccessService } from '../access/index.js'
import type { AuditService } from '../audit/index.js'
import type { OperationRegistry, OperationServices } from '../operations/index.js'
import type { WriteHooks } from '../records/index.js'
import { createFlowsService } from './flows/service.js'
import { flowsRoutes } from './flows/routes.js'
import {
  createQuotasService,
  createRunsPerHour,
  quotasRoutes,
  type QuotasService,
  type UsageProvider,
} from './quotas/index.js'
import { createRuns } from './runs/index.js'
import { createScriptsService, scriptsRoutes } from './scripts/index.js'
import { createPersonOf, createTriggers, type TriggerEvents } from './triggers/index.js'

/**
 * The operations' services app.ts wires (decision 058): all of them but those automation builds itself
 * (scripts, quotas, the run engine's sub-flows and run counts) or builds on its quotas (ai).
 */
export type PlatformServices = Omit<OperationServices, 'scripts' | 'quotas' | 'subFlows' | 'runStats' | 'ai'>

export interface AutomateDeps {
  systemDb: Kysely<any>
  dbKind: DbKind
  clock: Clock
  pubsub: PubSub
  access: AccessService
  audit: AuditService
  /** The operations catalog (the operations module's registry). */
  operations: OperationRegistry
  /** A user row by id (users.findRow): the flow owner's role for runAs flow_owner; a run's $user.email. */
  findUser(
    id: string,
  ): Promise<{ id: string; project_id: string; role_id: string; email: string | null; banned: boolean | number } | null>
  /** An API key by id with its creator's current role (apikeys.byId): the publisher of a flow published through a key. */
  findApiKey(id: string): Promise<{
    id: string
    projectId: string
    userId: string | null
    creatorRoleId: string | null
    capabilities: readonly string[]
  } | null>
  publicUrl: string
  /** A collection of the project by name, or null (collections.find): the flow preflight checks the collections steps name exist. */
  findCollection(
    projectId: string,
    name: string,
  ): Promise<{ readonly accessControl?: { readonly preset?: string } | null } | null>
  /** Runs: runs per hour, concurrency places, the flow-runs queue, and what operations reach as ctx.services. */
  limiter: RateLimiter
  slots: Slots
  queue: JobQueue
  log: Logger
  services: PlatformServices
  /**
   * Services operations reach that need the quotas, built once they are (ai: the daily AI token quota and
   * its usage); merged into ctx.services. Returns the services and what closes them.
   */
  quotaServices: (quotas: QuotasService) => { services: Pick<OperationServices, 'ai'>; close?(): void }
  /** Triggers: the events of record writes, sign-ins and uploads, the records write hooks (event_filter), TRUST_PROXY (webhook ip_allowlist). */
  events: EventBus<TriggerEvents>
  hooks: WriteHooks
  trustProxy: boolean
  /** lib/outbound's client (ALLOW_PRIVATE_NETWORK applied): scripts' fetch. */
  outbound: OutboundClient
  /** Usage that modules built before automation report to the quotas service (email: emailsToday). */
  usage?: readonly UsageProvider[]
  /** Every project at start, and each one created later: both get the system-managed flows (decision 038). */
  projects: { listAcrossProjects(): Promise<readonly { id: string }[]> }
  /** A flow run's lease (RUN_LEASE_SECONDS): how long a silent instance keeps its runs; 2 minutes when not given. */
  runLeaseMs?: number
  projectCreated: Observers<[string]>
}

/**
 * Automation (decision 026): built in the order quotas → flows → runs → triggers, each part given the
 * ones before it at construction. `service` is the flows service; `lookup` is what runs and triggers read.
 */
export async function createAutomateModule(deps: AutomateDeps) {
  const { systemDb, clock, pubsub, access, audit } = deps
  const quotas = await createQuotasService({ systemDb, clock, pubsub, access, audit })
  const flows = await createFlowsService({ ...deps, quotas })
  const runsPerHour = createRunsPerHour({
    limiter: deps.limiter,
    clock,
    limits: (projectId) => quotas.limits(projectId),
  })
  const scripts = createScriptsService({ systemDb, clock, access, audit, quotas, runsPerHour, outbound: deps.outbound })
  // Operations reach saved scripts, the script CPU quota and lib/outbound as ctx.services.scripts (run_script),
  // the quotas with their usage as ctx.services.quotas (system_limit_check; send_email's maxEmailsPerDay), and
  // what modules built on the quotas give (ai: the ai_* operations' service).
  const dropProvided = (deps.usage ?? []).map((provider) => quotas.addUsage(provider))
  const withQuotas = deps.quotaServices(quotas)
  const services = { ...deps.services, ...withQuotas.services, scripts: scripts.host, quotas }
  const runs = await createRuns({
    systemDb,
    registry: deps.operations,
    flows: flows.lookup,
    quotas,
    access,
    users: { findRow: deps.findUser },
    apiKeys: { findApiKey: deps.findApiKey },
    limiter: deps.limiter,
    queue: deps.queue,
    slots: deps.slots,
    pubsub,
    clock,
    log: deps.log,
    services,
    staleAfterMs: deps.runLeaseMs,
  })
  const dropUsage = quotas.addUsage(runs.usage)
  // System-managed flows: every project has them (before the triggers start, which register their schedules).
  for (const project of await deps.projects.listAcrossProjects()) await flows.ensureSystemFlows(project.id)
  const dropProjectCreated = deps.projectCreated.add(
    async (projectId) => void (await flows.ensureSystemFlows(projectId)),
  )
  const triggers = await createTriggers({
    flows: flows.lookup,
    runs: runs.starter,
    events: deps.events,
    hooks: deps.hooks,
    queue: deps.queue,
    clock,
    log: deps.log,
    trustProxy: deps.trustProxy,
    personOf: createPersonOf({
      findRow: deps.findUser,
      roleById: (projectId, roleId) => access.roleById(projectId, roleId),
    }),
    authorize: (principal, permission) => access.authorize(principal, permission),
  })
  return {
    service: flows,
    quotas,
    /** Saved scripts (/scripts CRUD and test). */
    scripts,
    lookup: flows.lookup,
    /** The runs API in process (execute, test, list, get, delete, cancel, cleanup-stale). */
    runs: runs.service,
    /** What triggers and trigger_flow start runs with. */
    starter: runs.starter,
    /** Run figures for /metrics (no principal: the operator's endpoint reads them). */
    runMetrics: runs.metrics,
    /** Manual, webhook and api_endpoint entries in process (trigger_flow goes through ctx.services.subFlows, which checks the run's principal). */
    triggers,
    routers: (guards) => [
      flowsRoutes(flows, guards.security, deps.operations.list()),
      quotasRoutes(quotas, guards.security),
      scriptsRoutes(scripts, guards.security),
      ...runs.routers(guards),
      ...triggers.routers(guards),
    ],
    async close() {
      dropProjectCreated()
      await triggers.close()
      dropUsage()
      for (const drop of dropProvided) drop()
      withQuotas.close?.()
      await runs.close()
      await flows.close()
      await quotas.close()
    },
  } satisfies AppModule
}

export type AutomateModule = Awaited<ReturnType<typeof createAutomateModule>>
