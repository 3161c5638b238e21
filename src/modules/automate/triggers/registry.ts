import { anotherFlow } from './another-flow.js'
import { apiEndpoint } from './api-endpoint.js'
import { appEvent } from './app-event.js'
import { eventAction } from './event-action.js'
import { eventFilter } from './event-filter.js'
import { manual } from './manual.js'
import { schedule } from './schedule.js'
import { webhook } from './webhook.js'

/**
 * Every trigger type, one file each, in the spec's order ("Trigger types"); registry.test.ts checks it against
 * the spec. The trigger types and their config schemas are read from here: adding a trigger is its file and
 * its line below.
 */
export const triggerDefinitions = Object.freeze([
  eventAction,
  eventFilter,
  webhook,
  schedule,
  manual,
  apiEndpoint,
  anotherFlow,
  appEvent,
] as const)

type Registered = (typeof triggerDefinitions)[number]
export type TriggerType = Registered['type']

/** The trigger types, in the registry's order (the flows API's `triggerType` enum). */
export const triggerTypes: readonly TriggerType[] = Object.freeze(
  triggerDefinitions.map((definition) => definition.type),
)

/** The definition of a trigger type; every type has one. */
export function triggerDefinition(type: TriggerType): Registered {
  const found = triggerDefinitions.find((definition) => definition.type === type)
  if (!found) throw new Error(`No trigger is registered for ${type}`)
  return found
}
