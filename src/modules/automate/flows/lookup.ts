import type { FlowForRun, FlowLookup } from '../model.js'
import type { FlowsCore } from './core.js'
import { snapshotOf, toFlowForRun } from './wire.js'

/**
 * What the run engine and the triggers read (model.ts FlowLookup): no permission check, real credential
 * values; their callers were checked, or the trigger is the flow's own.
 */
export function createFlowLookup(core: FlowsCore): FlowLookup {
  const { store } = core
  // Which flow a token names (fixed for the flow's life), so a webhook call on an active flow is answered
  // from the active flows' cache, as execute is, instead of two reads per call (bench flows: 921 → see
  // docs/automation-runs.md). The cached flow must still carry the token and be active, else the row is read.
  const tokens = new Map<string, { projectId: string; flowId: string }>()
  return {
    async byId(projectId, flowId) {
      const row = await store.byId(projectId, flowId)
      return row ? core.forRun(row) : null
    },
    async byWebhookToken(token) {
      const known = tokens.get(token)
      if (known) {
        const active = (await core.active.get(known.projectId)).find(
          (f) => f.id === known.flowId && f.webhookToken === token,
        )
        if (active) return active
      }
      const row = await store.byWebhookTokenAcrossProjects(token)
      if (!row) return null
      if (tokens.size >= 10_000) tokens.clear()
      tokens.set(token, { projectId: row.project_id, flowId: row.id })
      return core.forRun(row)
    },
    async version(projectId, flowId, version) {
      const row = await store.version(projectId, flowId, version)
      return row ? snapshotOf(row.snapshot) : null
    },
    async activeByTrigger(projectId, triggerType) {
      // What runs is the published version: its trigger decides, whatever the draft has been changed to.
      return (await core.active.get(projectId)).filter(
        (f) => (f.published?.triggerType ?? f.triggerType) === triggerType,
      )
    },
    async activeByTriggerAcrossProjects(triggerType) {
      // Every active flow (few), then filtered by the published version's trigger, as above.
      const rows = await store.activeAcrossProjects()
      const out: FlowForRun[] = []
      // One query for the published snapshots of each project's flows, not one per flow.
      for (const projectId of new Set(rows.map((r) => r.project_id))) {
        const ofProject = rows.filter((r) => r.project_id === projectId)
        const snapshots = await store.publishedSnapshots(projectId, ofProject)
        for (const row of ofProject) {
          const flow = toFlowForRun(row, snapshots.get(row.id) ?? null)
          if ((flow.published?.triggerType ?? flow.triggerType) === triggerType) out.push(flow)
        }
      }
      return out
    },
    async countRun(projectId, flowId, outcome) {
      await store.countRun(projectId, flowId, outcome.failed, outcome.atSeconds)
    },
    async countRuns(projectId, flowId, counts) {
      await store.countRuns(projectId, flowId, counts.runs, counts.failures, counts.atSeconds)
    },
    changes: core.changes,
  }
}
