import { AppError } from '../../../lib/errors.js'
import { parseSchedule } from '../../../lib/queue/index.js'
import type { Principal } from '../../../lib/principal.js'
import { FlowOptionsSchema, RunAsSchema, type FlowStatus, type TriggerType } from '../model.js'
import { createFlowsCore, type FlowsDeps } from './core.js'
import { triggerDefinitions } from '../triggers/registry.js'
import { createFlowLookup } from './lookup.js'
import { jsonOf } from './published-schemas.js'
import { restoreMasked, restoreMaskedTrigger } from './masking.js'
import { createPortable } from './portable.js'
import { assertMayRelease, assertMaySetRunAs, assignableRoles } from './run-as.js'
import { CreateFlowSchema, PatchFlowSchema, StatusSchema } from './schemas.js'
import type { FlowChanges } from './store.js'
import { parseInput } from './validate.js'
import { createSystemFlowInstaller } from './system-flows.js'
import { createVersions } from './versions.js'
import { draftOf, toFlow, type Flow, type FlowDetail } from './wire.js'

export type { FlowsDeps }

/**
 * Flows (automation spec "Flows"): drafts, status, versions, export and import, runAs. Every method takes
 * the acting principal first and checks its permission on system/automate itself; bodies are checked
 * here (422 validation_error) so in-process callers get the same checks as the API. `lookup` is what the
 * run engine and the triggers read (no permission check).
 */
export async function createFlowsService(deps: FlowsDeps) {
  const core = await createFlowsCore(deps)
  const { store } = core
  const runAsDeps = core.runAsDeps

  const detail = core.detail

  return {
    lookup: createFlowLookup(core),
    ...createVersions(core),
    ...createPortable(core),

    /** The project's flows, oldest first; credentials masked unless the caller holds update. Throws forbidden (read). */
    async list(actor: Principal): Promise<Flow[]> {
      await deps.access.authorize(actor, 'system/automate:read')
      const reveal = await core.reveals(actor)
      return (await store.list(actor.projectId)).map((row) => toFlow(row, reveal))
    },

    /** One flow with publishedOperations and webhookEndpoint. Throws forbidden (read), not_found. */
    async get(actor: Principal, id: string): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:read')
      return detail(actor.projectId, id, await core.reveals(actor))
    },

    /** Creates a draft (runAs is not accepted here). Throws forbidden (create), validation_error, quota_exceeded. */
    async create(actor: Principal, input: unknown): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:create')
      if (typeof input === 'object' && input !== null && 'runAs' in input) {
        throw new AppError(
          'validation_error',
          'runAs: not accepted on create; set it with PATCH once the flow exists',
          { issues: [{ path: 'runAs', message: 'not accepted on create' }] },
        )
      }
      const body = parseInput(CreateFlowSchema, input)
      // A new flow has nothing stored: masks are dropped.
      const operations = restoreMasked(body.operations, [])
      const triggerConfig = core.check(body.triggerType, restoreMaskedTrigger(body.triggerConfig, null), operations)
      const row = await core.insertDraft(actor, { ...body, triggerConfig, operations })
      await deps.audit.record({
        projectId: row.project_id,
        action: 'flow.created',
        actor,
        target: { type: 'flow', id: row.id },
        details: { name: row.name, slug: row.slug, triggerType: row.trigger_type },
      })
      await core.changed(row.project_id, row.id)
      return detail(row.project_id, row.id, await core.reveals(actor))
    },

    /**
     * Changes the draft (the published version is untouched until the next publish). A mask keeps the
     * stored credential. A flow that runs (or is to run) as other than triggering_user may be changed only
     * by a caller with manage whose reach covers the delegation. Throws forbidden, not_found, validation_error,
     * system_flow_readonly.
     */
    async update(actor: Principal, id: string, input: unknown): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:update')
      const body = parseInput(PatchFlowSchema, input)
      const projectId = actor.projectId
      const row = await core.requireUserFlow(projectId, id, 'edited')
      if (Object.keys(body).length === 0) return detail(projectId, id, await core.reveals(actor))
      const stored = draftOf(row)
      // Changing a delegated flow wields its delegation: the caller must be one who could set that runAs (decision 028).
      await assertMaySetRunAs(runAsDeps, actor, projectId, row.created_by, RunAsSchema.parse(body.runAs ?? row.run_as))
      const triggerType = (body.triggerType ?? stored.triggerType) as TriggerType
      const operations =
        body.operations === undefined ? [...stored.operations] : restoreMasked(body.operations, stored.operations)
      const sentConfig =
        body.triggerConfig ??
        (body.triggerType !== undefined && body.triggerType !== stored.triggerType ? {} : stored.triggerConfig)
      const triggerConfig = core.check(
        triggerType,
        restoreMaskedTrigger(sentConfig, triggerType === stored.triggerType ? stored.triggerConfig : null),
        operations,
      )
      const changes: FlowChanges = {
        name: body.name ?? row.name,
        description: body.description ?? row.description,
        icon: body.icon ?? row.icon,
        color: body.color ?? row.color,
        trigger_type: triggerType,
        trigger_config: JSON.stringify(triggerConfig),
        operations: JSON.stringify(operations),
        options:
          body.options === undefined
            ? row.options
            : JSON.stringify(FlowOptionsSchema.parse({ ...stored.options, ...body.options })),
        collections: body.collections === undefined ? row.collections : JSON.stringify(body.collections),
        run_as: body.runAs ?? row.run_as,
        updated_at: deps.clock.seconds(),
      }
      if (!(await store.update(projectId, id, changes))) throw core.notFound()
      // Field names only: values may hold credentials.
      await deps.audit.record({
        projectId,
        action: 'flow.updated',
        actor,
        target: { type: 'flow', id },
        details: { name: changes.name, changed: Object.keys(body) },
      })
      await core.changed(projectId, id)
      return detail(projectId, id, true)
    },

    /** Deletes the flow with its versions, runs and step logs (its webhook goes with its token). Throws forbidden (delete), not_found, system_flow_readonly. */
    async delete(actor: Principal, id: string): Promise<void> {
      await deps.access.authorize(actor, 'system/automate:delete')
      const projectId = actor.projectId
      const row = await core.requireUserFlow(projectId, id, 'deleted')
      if (!(await store.delete(projectId, id))) throw core.notFound()
      await deps.audit.record({
        projectId,
        action: 'flow.deleted',
        actor,
        target: { type: 'flow', id },
        details: { name: row.name, slug: row.slug },
      })
      await core.changed(projectId, id)
    },

    /**
     * Moves the flow to draft, active or inactive. Activating needs a published version (409 conflict), a
     * schedule's published cron and time zone must be valid (422), and the caller must reach over what the
     * runs will act as (its publisher, or its delegation: 403; a publisher who can no longer act: 409).
     * Throws forbidden (update), not_found.
     */
    async setStatus(actor: Principal, id: string, input: unknown): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:update')
      const { status } = parseInput(StatusSchema, input)
      const projectId = actor.projectId
      const row = await core.requireFlow(projectId, id)
      // A system-managed flow is paused (inactive) and resumed (active); it has no draft to go back to.
      if (row.system !== null && status === 'draft') {
        throw new AppError(
          'system_flow_readonly',
          `This flow is system-managed (${row.system}): its status is active or inactive`,
          { system: row.system },
        )
      }
      if (status === row.status) return detail(projectId, id, true)
      if (status === 'active') {
        const published = (await core.forRun(row)).published
        if (!published)
          throw new AppError('conflict', 'Publish the flow before activating it: only a published version runs', {
            status: row.status,
          })
        // Setting a flow running puts its publisher's rights (or its delegation) to work: decision 045.
        if (row.system === null)
          await assertMayRelease(runAsDeps, actor, projectId, {
            createdBy: row.created_by,
            runAs: published.runAs,
            publishedBy: row.published_by,
          })
        if (published.triggerType === 'schedule') {
          const config = published.triggerConfig as { cron?: string; timezone?: string }
          parseSchedule(String(config.cron ?? ''), config.timezone ?? 'UTC')
        }
      }
      await store.update(projectId, id, { status: status satisfies FlowStatus, updated_at: deps.clock.seconds() })
      await deps.audit.record({
        projectId,
        action: 'flow.status_changed',
        actor,
        target: { type: 'flow', id },
        details: { name: row.name, from: row.status, to: status },
      })
      await core.changed(projectId, id)
      return detail(projectId, id, true)
    },

    /** Installs the system-managed flows the project lacks (at start, for each project; when one is created). Returns the ids installed. */
    ensureSystemFlows: createSystemFlowInstaller(core),

    /**
     * The trigger types with their config schemas (JSON Schema, as a client writes a config): what a flow
     * editor builds its trigger form from. Throws unauthorized, forbidden (read).
     */
    async triggerTypes(actor: Principal): Promise<{ type: string; label: string; schema: Record<string, unknown> }[]> {
      await deps.access.authorize(actor, 'system/automate:read')
      return triggerDefinitions.map((d) => ({ type: d.type, label: d.label, schema: jsonOf(d.configSchema) }))
    },

    /** The roles the caller may delegate a flow to (runAs role:<id>); empty without manage. Throws unauthorized. */
    assignableRoles: (actor: Principal) => assignableRoles(runAsDeps, actor),

    async close(): Promise<void> {
      await core.active.close()
    },
  }
}

export type FlowsService = Awaited<ReturnType<typeof createFlowsService>>
