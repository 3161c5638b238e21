import type { Kysely } from 'kysely'
import { createProjectCache } from '../../../lib/cache/project-cache.js'
import type { Clock } from '../../../lib/clock.js'
import { randomToken } from '../../../lib/crypto/index.js'
import type { DbKind } from '../../../lib/db/index.js'
import { AppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import { createObservers } from '../../../lib/observers.js'
import type { Principal } from '../../../lib/principal.js'
import type { PubSub } from '../../../lib/pubsub/index.js'
import type { AccessService } from '../../access/index.js'
import type { AuditService } from '../../audit/index.js'
import type { OperationRegistry } from '../../operations/index.js'
import type { FlowDefinition, FlowForRun, Step, TriggerType } from '../model.js'
import type { PublisherSources } from '../publisher.js'
import { quotaExceeded, type QuotasService } from '../quotas/index.js'
import { createPreflight, type FlowWarning } from './preflight.js'
import type { RunAsDeps } from './run-as.js'
import { freeSlug, slugFromName } from './slug.js'
import { createFlowsStore, type FlowRow, type FlowsDb } from './store.js'
import { missingCredentials, type MissingCredential } from './missing-credentials.js'
import { checkDraft } from './validate.js'
import { draftOf, toFlowDetail, toFlowForRun, type FlowDetail } from './wire.js'

export interface FlowsDeps {
  systemDb: Kysely<any>
  dbKind: DbKind
  clock: Clock
  pubsub: PubSub
  access: Pick<AccessService, 'authorize' | 'decide' | 'assertMayAssign' | 'roleById' | 'listRoles' | 'hasAdminAccess'>
  audit: Pick<AuditService, 'record'>
  /** The save-time checks of steps (types, configs, keys, templates, rule trees). */
  operations: OperationRegistry
  quotas: Pick<QuotasService, 'limits' | 'addUsage'>
  /** A user row by id (the flow owner's role, for runAs flow_owner; a publisher's, for activation). */
  findUser(id: string): Promise<{ project_id: string; role_id: string; banned?: boolean | number } | null>
  /** An API key by id (apikeys.byId): the publisher of a flow published through a key. */
  findApiKey: PublisherSources['findApiKey']
  /** A collection of the project by name, or null (collections.find): the preflight's check that the collections a flow names exist. */
  findCollection(
    projectId: string,
    name: string,
  ): Promise<{ readonly accessControl?: { readonly preset?: string } | null } | null>
  /** PUBLIC_URL: the base of webhook endpoints. */
  publicUrl: string
}

/** The draft fields a new flow is made of (already shape-checked; masks already restored). */
export interface NewDraft {
  slug?: string
  name: string
  description: string
  icon: string
  color: string
  triggerType: TriggerType
  triggerConfig: Record<string, unknown>
  operations: Step[]
  options: Record<string, unknown>
  collections: string[]
}

const notFound = () => new AppError('not_found', 'Flow not found')

/** What every part of the flows service shares: the store, the checks, the cache of active flows and the change observers. */
export async function createFlowsCore(deps: FlowsDeps) {
  const store = createFlowsStore(deps.systemDb, deps.dbKind)
  const changes = createObservers<[string, string, FlowForRun | null]>()
  // Every active flow of a project with its published definition, for triggers (dropped on every change, on every instance).
  const active = await createProjectCache<readonly FlowForRun[]>({
    pubsub: deps.pubsub,
    channel: 'automate.flows',
    load: async (projectId) => {
      const rows = await store.active(projectId)
      const snapshots = await store.publishedSnapshots(projectId, rows)
      return rows.map((r) => toFlowForRun(r, snapshots.get(r.id) ?? null))
    },
  })
  deps.quotas.addUsage(async (projectId) => ({ flows: await store.count(projectId) }))
  const preflight = createPreflight({
    access: deps.access,
    operations: deps.operations,
    findCollection: deps.findCollection,
    sources: {
      findRow: async (id) => {
        const user = await deps.findUser(id)
        return user && { id, project_id: user.project_id, role_id: user.role_id, banned: user.banned ?? false }
      },
      roleById: (projectId, id) => deps.access.roleById(projectId, id),
      findApiKey: deps.findApiKey,
    },
  })

  /** The preflight warnings of what the flow runs: its published version (none before the first publish). */
  async function warningsOf(row: FlowRow, published: FlowDefinition | null): Promise<FlowWarning[]> {
    if (!published) return []
    return preflight.check({
      projectId: row.project_id,
      definition: published,
      createdBy: row.created_by,
      publishedBy: row.published_by,
      system: row.system !== null,
    })
  }

  async function forRun(row: FlowRow): Promise<FlowForRun> {
    const snapshot =
      row.published_version === null ? undefined : await store.version(row.project_id, row.id, row.published_version)
    return toFlowForRun(row, snapshot?.snapshot ?? null)
  }

  /** Throws conflict (409) when the project has a flow at this slug. */
  async function assertSlugFree(projectId: string, slug: string, trx?: FlowsDb): Promise<void> {
    if (await store.slugTaken(projectId, slug, trx))
      throw new AppError('conflict', `A flow with the slug "${slug}" already exists in this project`, { slug })
  }

  return {
    deps,
    store,
    assertSlugFree,
    runAsDeps: { access: deps.access, findUser: deps.findUser, findApiKey: deps.findApiKey } satisfies RunAsDeps,
    changes,
    active,
    forRun,
    notFound,
    warningsOf,

    /** The flow row of the caller's project, or not_found. */
    async requireFlow(projectId: string, id: string, trx?: FlowsDb): Promise<FlowRow> {
      const row = await store.byId(projectId, id, trx)
      if (!row) throw notFound()
      return row
    },

    /**
     * The flow row of the caller's project for a change only a user's flow takes (edit, delete, publish,
     * rollback, replace by import, duplicate). Throws not_found, system_flow_readonly (409) for a
     * system-managed flow: it can be read and paused, nothing else (decision 038).
     */
    async requireUserFlow(projectId: string, id: string, what: string, trx?: FlowsDb): Promise<FlowRow> {
      const row = await store.byId(projectId, id, trx)
      if (!row) throw notFound()
      if (row.system !== null) {
        throw new AppError(
          'system_flow_readonly',
          `This flow is system-managed (${row.system}): it can be read and paused (status), not ${what}`,
          { system: row.system },
        )
      }
      return row
    },

    /** The flow detail as the API shows it (credentials masked unless `reveal`), with the preflight warnings of its published version. Throws not_found. */
    async detail(projectId: string, id: string, reveal: boolean): Promise<FlowDetail> {
      const row = await store.byId(projectId, id)
      if (!row) throw notFound()
      const { published } = await forRun(row)
      const detail = toFlowDetail(
        row,
        published,
        reveal,
        deps.publicUrl,
        missingCredentials(deps.operations, draftOf(row)),
      )
      return { ...detail, warnings: await warningsOf(row, published) }
    },

    /** The credentials the draft lacks (decision 052): publishing is refused until they are given. */
    missing(draft: {
      triggerType: string
      triggerConfig: Record<string, unknown>
      operations: readonly unknown[]
    }): MissingCredential[] {
      return missingCredentials(deps.operations, draft)
    },

    /** Whether the caller sees credentials (holders of system/automate:update). */
    async reveals(actor: Principal): Promise<boolean> {
      return (await deps.access.decide(actor, 'system/automate', 'update')).allowed
    },

    /** The draft checked as saved: the trigger config (defaults filled in) and the steps through the registry. Throws validation_error. */
    check(
      triggerType: TriggerType,
      triggerConfig: Record<string, unknown>,
      operations: Step[],
    ): Record<string, unknown> {
      return checkDraft(deps.operations, triggerType, triggerConfig, operations)
    },

    /**
     * Inserts a new draft flow owned by the caller, under the project's max-flows quota (counted and
     * inserted under one lock on every instance). Throws quota_exceeded, conflict (slug taken).
     */
    async insertDraft(actor: Principal, draft: NewDraft): Promise<FlowRow> {
      const projectId = actor.projectId
      const limits = await deps.quotas.limits(projectId)
      const now = deps.clock.seconds()
      return store.locked(projectId, async (trx) => {
        const count = await store.count(projectId, trx)
        if (count >= limits.maxFlows) throw quotaExceeded('maxFlows', limits.maxFlows, count)
        let slug = draft.slug
        if (slug !== undefined) {
          await assertSlugFree(projectId, slug, trx)
        } else {
          const base = slugFromName(draft.name)
          slug = freeSlug(base, new Set(await store.slugsLike(projectId, base, trx)))
        }
        const row: FlowRow = {
          id: newId(),
          project_id: projectId,
          slug,
          name: draft.name,
          description: draft.description,
          icon: draft.icon,
          color: draft.color,
          status: 'draft',
          trigger_type: draft.triggerType,
          trigger_config: JSON.stringify(draft.triggerConfig),
          operations: JSON.stringify(draft.operations),
          options: JSON.stringify(draft.options),
          collections: JSON.stringify(draft.collections),
          created_by: actor.userId,
          run_as: 'triggering_user',
          current_version: 0,
          published_version: null,
          published_by: null,
          webhook_token: randomToken(24),
          last_run_at: null,
          run_count: 0,
          error_count: 0,
          created_at: now,
          updated_at: now,
          system: null,
        }
        await store.insert(row, trx)
        return row
      })
    },

    /** After a write: drops the active-flows cache everywhere and tells the listeners (triggers) what the flow is now. */
    async changed(projectId: string, id: string): Promise<void> {
      await active.invalidate(projectId)
      const row = await store.byId(projectId, id)
      await changes.notify(projectId, id, row ? await forRun(row) : null)
    },
  }
}

export type FlowsCore = Awaited<ReturnType<typeof createFlowsCore>>
