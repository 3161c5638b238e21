import type { TriggerType } from '../model.js'
import { anotherFlow } from './another-flow.js'
import { apiEndpoint } from './api-endpoint.js'
import { appEvent } from './app-event.js'
import type { TriggerDefinition } from './define-trigger.js'
import { eventAction } from './event-action.js'
import { eventFilter } from './event-filter.js'
import { manual } from './manual.js'
import { schedule } from './schedule.js'
import { webhook } from './webhook.js'

/** Every trigger type, one file each, in the spec's order ("Trigger types"); registry.test.ts checks it against the model. */
export const triggerDefinitions: readonly TriggerDefinition[] = Object.freeze([eventAction, eventFilter, webhook, schedule, manual, apiEndpoint, anotherFlow, appEvent])

/** The definition of a trigger type; every type of the model has one. */
export function triggerDefinition(type: TriggerType): TriggerDefinition {
  const found = triggerDefinitions.find((definition) => definition.type === type)
  if (!found) throw new Error(`No trigger is registered for ${type}`)
  return found
}
