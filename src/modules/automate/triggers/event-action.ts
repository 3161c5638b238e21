import { z } from 'zod'
import type { RecordEvent } from '../../records/index.js'
import { actingPrincipalOf } from '../../records/index.js'
import { recordEventsField } from './config-fields.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { coversCollection, liveFlow } from './match.js'

const recordEvents = ['record.create', 'record.update', 'record.delete'] as const
type RecordEventName = (typeof recordEvents)[number]

/** The event_action trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const eventActionConfig = z.object({ events: recordEventsField }).strict()

/**
 * event_action: after a record write committed, every active event_action flow of the project whose
 * `events` has the event and whose collection scope covers the collection starts a run in the background.
 * `$trigger` is `{ event, collection, body: the event payload }` (docs/events.md); the run is initiated by
 * the writer (the full principal rides on the event in process). Never awaited by the writer: the bus
 * calls this after the write answered, and a failed start (a quota, a flow deactivated meanwhile) is logged.
 */
export const eventAction = defineTrigger({
  type: 'event_action',
  label: 'Record event (after the write)',
  blocking: false,
  configSchema: eventActionConfig,
  start(deps) {
    const offs = recordEvents.map((name) => deps.events.on(name, (event) => onRecordEvent(deps, name, event)))
    return { stop: () => offs.forEach((off) => off()) }
  },
})

async function onRecordEvent(deps: TriggerDeps, name: RecordEventName, event: RecordEvent): Promise<void> {
  const flows = await deps.flows.activeByTrigger(event.projectId, 'event_action')
  if (flows.length === 0) return
  const initiator = actingPrincipalOf(event) ?? null
  const trigger = {
    type: 'event_action',
    event: name,
    collection: event.collection,
    method: null,
    body: event,
  } as const
  for (const candidate of flows) {
    const live = liveFlow(candidate, 'event_action', eventActionConfig)
    if (!live || !live.config.events.includes(name) || !coversCollection(live.definition, event.collection)) continue
    try {
      await deps.runs.start(live.flow, trigger, initiator)
    } catch (err) {
      deps.log.warn(
        { err, flowId: live.flow.id, projectId: event.projectId, event: name },
        'event_action flow did not start',
      )
    }
  }
}
