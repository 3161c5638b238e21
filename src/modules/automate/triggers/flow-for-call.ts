import { AppError } from '../../../lib/errors.js'
import type { z } from 'zod'
import type { FlowForRun, TriggerType } from '../model.js'
import { liveFlow, type LiveFlow } from './match.js'

/**
 * The flow a caller asked to start through one trigger's route (manual, api_endpoint): not_found when the
 * project has no such flow, conflict when its published trigger is another or it is not active.
 */
export function flowForCall<S extends z.ZodType>(
  flow: FlowForRun | null,
  type: TriggerType,
  schema: S,
  flowId: string,
): LiveFlow<S> {
  if (!flow) throw new AppError('not_found', 'Flow not found', { flowId })
  const live = liveFlow(flow, type, schema)
  if (live) return live
  if (flow.status !== 'active' || !flow.published)
    throw new AppError('conflict', 'The flow is not active: activate a published version first', {
      flowId,
      status: flow.status,
    })
  throw new AppError(
    'conflict',
    `The flow is not started this way: its published trigger is ${flow.published.triggerType}, not ${type}`,
    { flowId, triggerType: flow.published.triggerType },
  )
}
