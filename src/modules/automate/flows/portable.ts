import type { Principal } from '../../../lib/principal.js'
import type { FlowsCore } from './core.js'
import { assertMaySetRunAs } from './run-as.js'
import { maskSteps, maskTriggerConfig, restoreMasked, restoreMaskedTrigger } from './masking.js'
import { DuplicateFlowSchema, exportFormat, FlowDocumentSchema, slugSchema } from './schemas.js'
import { parseInput } from './validate.js'
import { draftOf, type FlowDetail } from './wire.js'

/** The portable flow document (export and import). */
export interface FlowDocument {
  format: typeof exportFormat
  slug: string
  name: string
  description: string
  icon: string
  color: string
  triggerType: string
  triggerConfig: Record<string, unknown>
  operations: unknown[]
  options: Record<string, unknown>
  collections: string[]
}

/**
 * Duplicate, export and import (automation spec "Import rules"). Exports mask credentials for everyone
 * and carry no runAs, counters, versions or token; an import makes a draft that runs as the triggering
 * user, or with `flowId` replaces that flow's draft and keeps the rest.
 */
export function createPortable(core: FlowsCore) {
  const { deps, store } = core
  return {
    /** A copy of the flow's draft, as a new draft (fresh slug and token, runAs triggering_user). Throws forbidden (create), not_found, quota_exceeded. */
    async duplicate(actor: Principal, id: string, input: unknown): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:create')
      const body = parseInput(DuplicateFlowSchema, input ?? {})
      const source = await core.requireUserFlow(actor.projectId, id, 'duplicated')
      const draft = draftOf(source)
      const row = await core.insertDraft(actor, {
        name: body.name ?? `${source.name} (copy)`.slice(0, 200),
        description: source.description,
        icon: source.icon,
        color: source.color,
        triggerType: draft.triggerType,
        triggerConfig: draft.triggerConfig,
        operations: [...draft.operations],
        options: draft.options,
        collections: [...draft.collections],
      })
      await deps.audit.record({
        projectId: row.project_id,
        action: 'flow.duplicated',
        actor,
        target: { type: 'flow', id: row.id },
        details: { from: id, name: row.name, slug: row.slug },
      })
      await core.changed(row.project_id, row.id)
      return core.detail(row.project_id, row.id, await core.reveals(actor))
    },

    /** The portable document of the flow's draft, credentials masked for everyone. Throws forbidden (read), not_found. */
    async exportFlow(actor: Principal, id: string): Promise<FlowDocument> {
      await deps.access.authorize(actor, 'system/automate:read')
      const row = await core.requireFlow(actor.projectId, id)
      const draft = draftOf(row)
      return {
        format: exportFormat,
        slug: row.slug,
        name: row.name,
        description: row.description,
        icon: row.icon,
        color: row.color,
        triggerType: draft.triggerType,
        triggerConfig: maskTriggerConfig(draft.triggerType, draft.triggerConfig),
        operations: maskSteps(draft.operations),
        options: draft.options,
        collections: [...draft.collections],
      }
    },

    /**
     * Imports a document, as the export answers it (`{ data: document }`) or bare. Without `flowId`: a new
     * draft at the document's slug (409 conflict when taken in this project, before any other check) or,
     * without a slug, at one derived from the name; masked credentials are dropped, and those a step needs
     * are listed in the detail's missingCredentials (decision 052). With `flowId` (needs update too):
     * replaces that flow's draft, keeping its id, slug, versions, counters, runAs and webhook token; masks
     * keep its stored credentials. Throws forbidden, not_found, validation_error, conflict, quota_exceeded.
     */
    async importFlow(actor: Principal, input: unknown, flowId?: string): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:create')
      const projectId = actor.projectId
      const raw = unwrapDocument(input)
      // A taken slug is the answer before anything else is checked: the document may be fine, only its place is not.
      const slug = flowId === undefined ? slugSchema.safeParse((raw as { slug?: unknown } | null)?.slug) : undefined
      if (slug?.success) await core.assertSlugFree(projectId, slug.data)
      const doc = parseInput(FlowDocumentSchema, raw)
      if (flowId !== undefined) {
        await deps.access.authorize(actor, 'system/automate:update')
        const row = await core.requireUserFlow(projectId, flowId, 'replaced by an import')
        const stored = draftOf(row)
        // Replacing a delegated flow's steps wields its delegation, as a PATCH would.
        await assertMaySetRunAs(core.runAsDeps, actor, projectId, row.created_by, stored.runAs)
        const operations = restoreMasked(doc.operations, stored.operations)
        const triggerConfig = core.check(
          doc.triggerType,
          restoreMaskedTrigger(doc.triggerConfig, doc.triggerType === stored.triggerType ? stored.triggerConfig : null),
          operations,
        )
        const changes = {
          name: doc.name,
          description: doc.description,
          icon: doc.icon,
          color: doc.color,
          trigger_type: doc.triggerType,
          trigger_config: JSON.stringify(triggerConfig),
          operations: JSON.stringify(operations),
          options: JSON.stringify(doc.options),
          collections: JSON.stringify(doc.collections),
          updated_at: deps.clock.seconds(),
        }
        if (!(await store.update(projectId, flowId, changes))) throw core.notFound()
        await deps.audit.record({
          projectId,
          action: 'flow.imported',
          actor,
          target: { type: 'flow', id: flowId },
          details: { name: doc.name, replaced: true },
        })
        await core.changed(projectId, flowId)
        return core.detail(projectId, flowId, await core.reveals(actor))
      }
      const operations = restoreMasked(doc.operations, [])
      const triggerConfig = core.check(doc.triggerType, restoreMaskedTrigger(doc.triggerConfig, null), operations)
      const row = await core.insertDraft(actor, { ...doc, triggerConfig, operations })
      await deps.audit.record({
        projectId,
        action: 'flow.imported',
        actor,
        target: { type: 'flow', id: row.id },
        details: { name: row.name, slug: row.slug, replaced: false },
      })
      await core.changed(projectId, row.id)
      return core.detail(projectId, row.id, await core.reveals(actor))
    },
  }
}

/** The document inside the export's answer (`{ "data": document }`, its only key), or the input as it is. */
function unwrapDocument(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input
  const keys = Object.keys(input)
  const data = (input as { data?: unknown }).data
  return keys.length === 1 && keys[0] === 'data' && typeof data === 'object' && data !== null && !Array.isArray(data)
    ? data
    : input
}
