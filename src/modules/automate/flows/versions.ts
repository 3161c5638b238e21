import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { parseSchedule } from '../../../lib/queue/index.js'
import type { FlowsCore } from './core.js'
import type { FlowWarning } from './preflight.js'
import { publisherRef } from '../run-identity.js'
import { describeMissing, type MissingCredential } from './missing-credentials.js'
import { assertMaySetRunAs } from './run-as.js'
import { PublishSchema } from './schemas.js'
import { parseInput } from './validate.js'
import { draftOf, iso, shownDefinition, snapshotOf, type FlowDetail } from './wire.js'

export interface VersionSummary {
  version: number
  changeSummary: string
  createdAt: string
  createdBy: string | null
}

export interface VersionRead extends VersionSummary {
  snapshot: Record<string, unknown>
}

const versionNotFound = () => new AppError('not_found', 'Flow version not found')

/**
 * An active flow's schedule is registered from what is published: a publish or rollback that would put an
 * unusable cron or time zone there is refused (422) as activation is, instead of leaving the old schedule
 * firing and the failure only logged.
 */
function checkLiveSchedule(
  status: string,
  definition: { triggerType: string; triggerConfig: Record<string, unknown> },
): void {
  if (status !== 'active' || definition.triggerType !== 'schedule') return
  const config = definition.triggerConfig as { cron?: string; timezone?: string }
  parseSchedule(String(config.cron ?? ''), config.timezone ?? 'UTC')
}

/** A draft lacking credentials is not published (decision 052): 422 validation_error naming each (details.missingCredentials). */
function assertComplete(missing: readonly MissingCredential[]): void {
  if (missing.length === 0) return
  const issues = describeMissing(missing)
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  throw new AppError(
    'validation_error',
    `The draft lacks a credential: ${issues[0]!.path} ${issues[0]!.message}${more}`,
    { missingCredentials: missing, issues },
  )
}

/**
 * Publishing, versions and rollback (automation spec "Versioning"): every publish freezes the draft as
 * an immutable version numbered one above the last; rollback copies a version back into the draft and
 * makes it the published one again (no new version is made: decision 028).
 */
export function createVersions(core: FlowsCore) {
  const { deps, store } = core
  return {
    /**
     * Freezes the draft as the next version and publishes it; the caller becomes its publisher, whose rights
     * its runs never exceed, and must be one who could set its runAs (decision 045). Throws forbidden (update;
     * a delegation beyond the caller), not_found, validation_error (also while the draft lacks a credential:
     * details.missingCredentials), system_flow_readonly, conflict (the draft's runAs changed meanwhile).
     * Answers the version and the preflight's warnings about it (decision 053): what its runs would likely
     * fail on. They never refuse the publish.
     */
    async publish(actor: Principal, id: string, input: unknown): Promise<{ version: number; warnings: FlowWarning[] }> {
      await deps.access.authorize(actor, 'system/automate:update')
      const { changeSummary } = parseInput(PublishSchema, input)
      const projectId = actor.projectId
      const checked = await core.requireUserFlow(projectId, id, 'published')
      await assertMaySetRunAs(core.runAsDeps, actor, projectId, checked.created_by, draftOf(checked).runAs)
      const version = await store.lockedFlow(id, async (trx) => {
        const row = await core.requireUserFlow(projectId, id, 'published', trx)
        const draft = draftOf(row)
        if (draft.runAs !== draftOf(checked).runAs)
          throw new AppError('conflict', "The flow's runAs changed while it was being published; publish again")
        assertComplete(core.missing(draft))
        // The draft was checked when saved; checked again, as the registry may have changed since.
        core.check(draft.triggerType, draft.triggerConfig, [...draft.operations])
        checkLiveSchedule(row.status, draft)
        const next = (await store.maxVersion(projectId, id, trx)) + 1
        const now = deps.clock.seconds()
        await store.insertVersion(
          {
            flow_id: id,
            version: next,
            project_id: projectId,
            snapshot: JSON.stringify(draft),
            change_summary: changeSummary,
            created_by: actor.userId,
            created_at: now,
          },
          trx,
        )
        // The publisher takes responsibility for what the flow does: its runs never act beyond them (decision 045).
        await store.update(
          projectId,
          id,
          { current_version: next, published_version: next, published_by: publisherRef(actor), updated_at: now },
          trx,
        )
        return next
      })
      await deps.audit.record({
        projectId,
        action: 'flow.published',
        actor,
        target: { type: 'flow', id },
        details: { version, changeSummary },
      })
      await core.changed(projectId, id)
      const published = await core.requireFlow(projectId, id)
      return { version, warnings: await core.warningsOf(published, (await core.forRun(published)).published) }
    },

    /** The flow's versions, newest first. Throws forbidden (read), not_found. */
    async versions(actor: Principal, id: string): Promise<VersionSummary[]> {
      await deps.access.authorize(actor, 'system/automate:read')
      await core.requireFlow(actor.projectId, id)
      return (await store.versions(actor.projectId, id)).map((v) => ({
        version: v.version,
        changeSummary: v.change_summary,
        createdAt: iso(v.created_at),
        createdBy: v.created_by,
      }))
    },

    /** One version's snapshot; credentials masked unless the caller holds update. Throws forbidden (read), not_found. */
    async version(actor: Principal, id: string, version: number): Promise<VersionRead> {
      await deps.access.authorize(actor, 'system/automate:read')
      await core.requireFlow(actor.projectId, id)
      const row = await store.version(actor.projectId, id, version)
      if (!row) throw versionNotFound()
      return {
        version: row.version,
        changeSummary: row.change_summary,
        createdAt: iso(row.created_at),
        createdBy: row.created_by,
        snapshot: { ...shownDefinition(snapshotOf(row.snapshot), await core.reveals(actor)) },
      }
    },

    /**
     * Overwrites the draft with the version's snapshot and publishes that version again, the caller as its
     * publisher (decision 045). runAs comes back as it was published, and must be one the caller could set.
     * Throws forbidden (manage), not_found.
     */
    async rollback(actor: Principal, id: string, version: number): Promise<FlowDetail> {
      await deps.access.authorize(actor, 'system/automate:manage')
      const projectId = actor.projectId
      const current = await core.requireUserFlow(projectId, id, 'rolled back')
      // Versions are immutable: read before the lock; the runAs it brings back must be one this caller could set.
      const row = await store.version(projectId, id, version)
      if (!row) throw versionNotFound()
      const snapshot = snapshotOf(row.snapshot)
      await assertMaySetRunAs(core.runAsDeps, actor, projectId, current.created_by, snapshot.runAs)
      checkLiveSchedule(current.status, snapshot)
      await store.lockedFlow(id, async (trx) => {
        await core.requireFlow(projectId, id, trx)
        await store.update(
          projectId,
          id,
          {
            name: snapshot.name,
            trigger_type: snapshot.triggerType,
            trigger_config: JSON.stringify(snapshot.triggerConfig),
            operations: JSON.stringify(snapshot.operations),
            options: JSON.stringify(snapshot.options),
            collections: JSON.stringify(snapshot.collections),
            run_as: snapshot.runAs,
            published_version: version,
            published_by: publisherRef(actor),
            updated_at: deps.clock.seconds(),
          },
          trx,
        )
      })
      await deps.audit.record({
        projectId,
        action: 'flow.rolled_back',
        actor,
        target: { type: 'flow', id },
        details: { version },
      })
      await core.changed(projectId, id)
      return core.detail(projectId, id, await core.reveals(actor))
    },
  }
}
