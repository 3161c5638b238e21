import { randomToken } from '../../../lib/crypto/index.js'
import { isAppError } from '../../../lib/errors.js'
import { newId } from '../../../lib/ids.js'
import { FlowOptionsSchema, type FlowDefinition, type Step } from '../model.js'
import type { FlowsCore } from './core.js'
import { freeSlug, slugFromName } from './slug.js'
import type { FlowRow } from './store.js'

/** One system-managed flow every project has (decision 038): a schedule running one system operation. */
export interface SystemFlowSpec {
  /** The system operation it runs; also the flow's `system` mark (one per project). */
  readonly kind: 'system_archival' | 'system_limit_check' | 'system_monthly_summary'
  readonly name: string
  readonly description: string
  readonly icon: string
  /** UTC. */
  readonly cron: string
}

/** The system flows, in the order they are installed. */
export const systemFlowSpecs: readonly SystemFlowSpec[] = Object.freeze([
  {
    kind: 'system_archival',
    name: 'System: archival',
    description:
      'Purges records soft-deleted longer ago than the setting automate.archival_days (30). Daily at 03:00 UTC.',
    icon: 'inventory_2',
    cron: '0 3 * * *',
  },
  {
    kind: 'system_limit_check',
    name: 'System: limit check',
    description: "Warns the project's admins of every automation quota used to 80% or more. Daily at 06:00 UTC.",
    icon: 'speed',
    cron: '0 6 * * *',
  },
  {
    kind: 'system_monthly_summary',
    name: 'System: monthly summary',
    description: "Sends the project's admins last month's flow runs and records created. On the 1st at 08:00 UTC.",
    icon: 'summarize',
    cron: '0 8 1 * *',
  },
])

/**
 * Installs the system flows a project lacks, active and published (version 1), owned by nobody: at start
 * for every project and when a project is created. Idempotent and safe across instances: the project's
 * flows lock is held while checking and inserting, and the unique (project_id, system) index refuses a
 * second copy. A user's flow already at the slug pushes the system flow's slug on (`-2`, …).
 * Returns the ids installed now.
 */
export function createSystemFlowInstaller(core: FlowsCore) {
  const { deps, store } = core
  return async function ensureSystemFlows(projectId: string): Promise<string[]> {
    const installed: string[] = []
    try {
      await store.locked(projectId, async (trx) => {
        for (const spec of systemFlowSpecs) {
          if (await store.bySystem(projectId, spec.kind, trx)) continue
          const operations: Step[] = [
            { key: spec.kind.replace(/^system_/, ''), type: spec.kind, config: {}, onError: 'stop' },
          ]
          // Checked as any flow is, with system operations allowed.
          deps.operations.checkSteps(operations, { system: true })
          const definition: FlowDefinition = {
            name: spec.name,
            triggerType: 'schedule',
            triggerConfig: { cron: spec.cron, timezone: 'UTC' },
            operations,
            options: FlowOptionsSchema.parse({}),
            collections: ['*'],
            runAs: 'triggering_user',
          }
          const base = slugFromName(spec.name)
          const slug = freeSlug(base, new Set(await store.slugsLike(projectId, base, trx)))
          const now = deps.clock.seconds()
          const row: FlowRow = {
            id: newId(),
            project_id: projectId,
            slug,
            name: spec.name,
            description: spec.description,
            icon: spec.icon,
            color: '#6750a4',
            status: 'active',
            trigger_type: 'schedule',
            trigger_config: JSON.stringify(definition.triggerConfig),
            operations: JSON.stringify(operations),
            options: JSON.stringify(definition.options),
            collections: JSON.stringify(definition.collections),
            created_by: null,
            run_as: 'triggering_user',
            current_version: 1,
            published_version: 1,
            published_by: null,
            webhook_token: randomToken(24),
            last_run_at: null,
            run_count: 0,
            error_count: 0,
            created_at: now,
            updated_at: now,
            system: spec.kind,
          }
          await store.insert(row, trx)
          await store.insertVersion(
            {
              flow_id: row.id,
              version: 1,
              project_id: projectId,
              snapshot: JSON.stringify(definition),
              change_summary: 'Installed by Plinth',
              created_by: null,
              created_at: now,
            },
            trx,
          )
          installed.push(row.id)
        }
      })
    } catch (err) {
      // Another instance installed them first: the unique (project_id, system) index refused the copy.
      if (isAppError(err) && err.code === 'already_exists') return []
      throw err
    }
    for (const id of installed) await core.changed(projectId, id)
    return installed
  }
}
