import type { OpenAPIHono } from '@hono/zod-openapi'
import type { AppEnv } from '../../../lib/http/index.js'
import type { RouteGuards } from '../../../lib/module.js'
import type { Principal } from '../../../lib/principal.js'
import type { FlowForRun, TriggerType } from '../model.js'
import { callEndpoint } from './api-endpoint.js'
import type { TriggerDefinition, TriggerDeps, TriggerWiring } from './define-trigger.js'
import { triggerManually, type ManualTrigger } from './manual.js'
import { triggerDefinitions } from './registry.js'
import { callWebhook, type WebhookCall } from './webhook.js'

/** What the automate module gets from its triggers: their routes, the calls others make in process, and close. */
export interface Triggers {
  routers(guards: RouteGuards): OpenAPIHono<AppEnv>[]
  /** POST /flows/:flowId/trigger in process (manual.ts). */
  triggerManually(principal: Principal, flowId: string, request: ManualTrigger): ReturnType<typeof triggerManually>
  /** The webhook URL in process (webhook.ts). */
  callWebhook(call: WebhookCall): Promise<{ runId: string }>
  /** The api_endpoint URL in process (api-endpoint.ts). */
  callEndpoint(principal: Principal, call: Parameters<typeof callEndpoint>[2]): ReturnType<typeof callEndpoint>
  /** Stops listening (events, write hooks, flow changes); the queue's schedules stay (they are the flows'). */
  close(): Promise<void>
}

/**
 * Starts every trigger of the registry on its source (event bus, write hooks, queue, routes), then
 * registers what active flows need (schedules) and keeps it in step with every flow change. Throws what
 * a trigger's start throws (the schedule queue cannot be defined twice in one instance).
 */
export async function createTriggers(
  deps: TriggerDeps,
  definitions: readonly TriggerDefinition<TriggerType>[] = triggerDefinitions,
): Promise<Triggers> {
  const started: { definition: TriggerDefinition<TriggerType>; wiring: TriggerWiring }[] = []
  let stopChanges = () => {}
  try {
    for (const definition of definitions) started.push({ definition, wiring: await definition.start(deps) })
    const stateful = started.filter(({ wiring }) => wiring.activate || wiring.deactivate)

    /** Brings every stateful trigger in line with one flow: activated by its own type, deactivated by the others. */
    async function follow(projectId: string, flowId: string, flow: FlowForRun | null): Promise<void> {
      for (const { definition, wiring } of stateful) {
        try {
          const mine = flow !== null && flow.status === 'active' && flow.published?.triggerType === definition.type
          if (mine) await wiring.activate?.(flow)
          else await wiring.deactivate?.(projectId, flowId)
        } catch (err) {
          deps.log.error(
            { err, projectId, flowId, trigger: definition.type },
            'a flow change could not be applied to its trigger',
          )
        }
      }
    }
    stopChanges = deps.flows.changes.add(follow)
    for (const { definition, wiring } of stateful) {
      if (!wiring.activate) continue
      for (const flow of await deps.flows.activeByTriggerAcrossProjects(definition.type))
        await follow(flow.projectId, flow.id, flow)
    }
  } catch (err) {
    stopChanges()
    for (const { wiring } of started) await wiring.stop?.()
    throw err
  }

  return {
    routers: (guards) => started.flatMap(({ wiring }) => wiring.routers?.(guards) ?? []),
    triggerManually: (principal, flowId, request) => triggerManually(deps, principal, flowId, request),
    callWebhook: (call) => callWebhook(deps, call),
    callEndpoint: (principal, call) => callEndpoint(deps, principal, call),
    async close() {
      stopChanges()
      for (const { wiring } of started) await wiring.stop?.()
    },
  }
}
