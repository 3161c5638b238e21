import { z } from 'zod'
import type { Principal } from '../../../lib/principal.js'
import type { EventBus, PrincipalSnapshot } from '../../../lib/events/index.js'
import { actingPrincipalOf } from '../../records/index.js'
import type { TriggerInput } from '../model.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { liveFlow } from './match.js'

/** The builder resources' writes (docs/events.md "Builder resources"). */
export const builderEventNames = ['view', 'navigation', 'renderer', 'lens_attachment', 'container'].flatMap((kind) =>
  ['create', 'update', 'delete'].map((action) => `${kind}.${action}`),
)

const appEvents = ['user.login', 'file.upload', 'collection.update', ...builderEventNames] as [string, ...string[]]
type AppEventName = (typeof appEvents)[number]

/** The app_event trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const appEventConfig = z
  .object({
    events: z.array(z.enum(appEvents)).min(1).max(appEvents.length),
  })
  .strict()

/**
 * app_event: a sign-in (user.login), a completed upload (file.upload), a schema change
 * (collection.update) or a builder resource's write (view.create, navigation.update, …) starts a run of every active app_event flow of the project whose `events` has it,
 * in the background. `$trigger` is `{ event, body:
 * the payload }` (docs/events.md). The run is initiated by the person behind the event, rebuilt from its
 * snapshot with their current role (a key or an anonymous caller initiates nothing: runAs
 * triggering_user then falls back as for webhooks).
 */
export const appEvent = defineTrigger({
  type: 'app_event',
  label: 'App event',
  blocking: false,
  configSchema: appEventConfig,
  start(deps) {
    // The bus is typed by the events it names; builder events all carry projectId and principal, as these do.
    const bus = deps.events as unknown as EventBus<Record<string, { projectId: string; principal: PrincipalSnapshot }>>
    const offs = appEvents.map((name) => bus.on(name, (payload) => onAppEvent(deps, name, payload)))
    return { stop: () => offs.forEach((off) => off()) }
  },
})

async function onAppEvent(
  deps: TriggerDeps,
  name: AppEventName,
  payload: { projectId: string; principal: PrincipalSnapshot },
): Promise<void> {
  const flows = await deps.flows.activeByTrigger(payload.projectId, 'app_event')
  const live = flows.flatMap((flow) => {
    const one = liveFlow(flow, 'app_event', appEventConfig)
    return one && one.config.events.includes(name) ? [one] : []
  })
  if (live.length === 0) return
  const initiator = await initiatorOf(deps, payload)
  const trigger: TriggerInput = { type: 'app_event', event: name, collection: null, method: null, body: payload }
  for (const { flow } of live) {
    try {
      await deps.runs.start(flow, trigger, initiator)
    } catch (err) {
      deps.log.warn({ err, flowId: flow.id, projectId: payload.projectId, event: name }, 'app_event flow did not start')
    }
  }
}

/** The full principal when the event carries it in process, else the person of its snapshot as they are now. */
async function initiatorOf(
  deps: TriggerDeps,
  payload: { projectId: string; principal: PrincipalSnapshot },
): Promise<Principal | null> {
  const acting = actingPrincipalOf(payload)
  if (acting) return acting
  const { id, kind } = payload.principal
  if (kind !== 'user' || id === null) return null
  return deps.personOf(payload.projectId, id)
}
