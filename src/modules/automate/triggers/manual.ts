import { AppError } from '../../../lib/errors.js'
import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonContent,
  principalOf,
  z,
} from '../../../lib/http/index.js'
import type { Principal } from '../../../lib/principal.js'
import type { TriggerInput } from '../model.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { flowForCall } from './flow-for-call.js'

type ManualConfig = z.output<typeof manualConfig>

/** What a person sends to start a manual flow (POST /flows/:flowId/trigger). */
export const ManualTriggerSchema = z
  .object({
    /** The collection the flow is started from (manual_type collection). */
    collection: z.string().min(1).max(100).optional(),
    /** The selected records' ids (selection single or multiple). */
    ids: z.array(z.string().min(1).max(200)).max(1000).optional(),
    /** Values of the flow's input_fields, by name. */
    input: z.record(z.string(), z.unknown()).optional(),
    /** true once the person confirmed, when the flow asks for confirmation. */
    confirmed: z.boolean().optional(),
  })
  .strict()
export type ManualTrigger = z.output<typeof ManualTriggerSchema>

const Started = z.object({
  data: z.object({ runId: z.string(), flowId: z.string(), status: z.string(), startedAt: z.string() }),
})

/**
 * Starts a manual flow for the caller (permission system/automate:execute): the request must fit the
 * published config (collection, selection, input_fields, confirm; 422 validation_error naming the field).
 * Throws unauthorized, forbidden, not_found, conflict (not a manual flow, not active), validation_error and
 * what RunStarter.start throws (quotas).
 */
export async function triggerManually(
  deps: Pick<TriggerDeps, 'flows' | 'runs' | 'authorize'>,
  principal: Principal,
  flowId: string,
  request: ManualTrigger,
) {
  await deps.authorize(principal, 'system/automate:execute')
  const live = flowForCall(await deps.flows.byId(principal.projectId, flowId), 'manual', manualConfig, flowId)
  const body = checkManualRequest(live.config, request)
  const trigger: TriggerInput = { type: 'manual', event: null, collection: body.collection, method: null, body }
  const started = await deps.runs.start(live.flow, trigger, principal)
  return { runId: started.runId, flowId, status: started.status, startedAt: started.startedAt }
}

/** `$trigger.body` of a manual run once the request fits the config; throws validation_error naming the field. */
export function checkManualRequest(
  config: ManualConfig,
  request: ManualTrigger,
): { collection: string | null; ids: string[]; input: Record<string, unknown> } {
  const collection = request.collection ?? null
  if (config.manual_type === 'collection') {
    if (collection === null)
      throw invalid('collection', 'This flow is started from a collection: name it in collection')
    if (config.collections.length > 0 && !config.collections.includes(collection)) {
      throw invalid('collection', `This flow is started from ${config.collections.join(', ')}, not ${collection}`)
    }
  } else if (collection !== null) {
    throw invalid('collection', 'This flow is global: it takes no collection')
  }
  const ids = request.ids ?? []
  if (config.selection === 'none' && ids.length > 0) throw invalid('ids', 'This flow takes no selected records')
  if (config.selection === 'single' && ids.length !== 1)
    throw invalid('ids', 'This flow takes exactly one selected record')
  if (config.selection === 'multiple' && ids.length === 0)
    throw invalid('ids', 'This flow takes one or more selected records')
  const input = request.input ?? {}
  const fields = new Map(config.input_fields.map((field) => [field.name, field]))
  for (const name of Object.keys(input))
    if (!fields.has(name)) throw invalid(`input.${name}`, `This flow has no input field ${name}`)
  for (const field of config.input_fields) {
    const value = input[field.name]
    if (value === undefined || value === null || value === '') {
      if (field.required) throw invalid(`input.${field.name}`, `${field.label ?? field.name} is required`)
      continue
    }
    const expected = expectedType(field.type)
    if (expected && typeof value !== expected)
      throw invalid(`input.${field.name}`, `${field.label ?? field.name} must be a ${expected}`)
  }
  if (config.confirm !== false && request.confirmed !== true) {
    throw invalid(
      'confirmed',
      typeof config.confirm === 'object'
        ? config.confirm.message
        : 'This flow asks for confirmation: send confirmed true',
    )
  }
  return { collection, ids, input }
}

// Input field types whose values have one JSON type; any other type (select, json, date, …) takes any value.
function expectedType(type: string): 'string' | 'number' | 'boolean' | null {
  if (type === 'number' || type === 'integer') return 'number'
  if (type === 'boolean' || type === 'checkbox') return 'boolean'
  if (type === 'text' || type === 'string' || type === 'textarea' || type === 'email' || type === 'url') return 'string'
  return null
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_error', message, { field })
}

const triggerRoute = defineRoute({
  method: 'post',
  path: '/api/v1/automate/flows/{flowId}/trigger',
  operationId: 'automateFlows.trigger',
  tags: ['Automation'],
  summary: 'Start a manual flow with its collection, selected records and input fields',
  permission: 'system/automate:execute',
  request: { params: z.object({ flowId: z.string().min(1).max(64) }), ...jsonBody(ManualTriggerSchema) },
  responses: {
    202: jsonContent(Started, 'The run started'),
    ...errorResponses(
      'invalid_request',
      'unauthorized',
      'forbidden',
      'not_found',
      'conflict',
      'validation_error',
      'unsupported_media_type',
    ),
  },
})

/** The manual trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const manualConfig = z
  .object({
    manual_type: z.enum(['collection', 'global']).default('global'),
    collections: z.array(z.string().min(1).max(100)).default([]),
    selection: z.enum(['none', 'single', 'multiple']).default('none'),
    input_fields: z
      .array(
        z.object({
          name: z.string().min(1).max(100),
          label: z.string().max(200).optional(),
          type: z.string().min(1).max(50).default('text'),
          required: z.boolean().default(false),
        }),
      )
      .max(50)
      .default([]),
    confirm: z.union([z.boolean(), z.object({ message: z.string().max(1000) })]).default(false),
  })
  .strict()

/** manual: started by a person from the UI or the API, 202 with the run. */
export const manual = defineTrigger({
  type: 'manual',
  label: 'Manual',
  blocking: false,
  configSchema: manualConfig,
  start(deps) {
    return {
      routers(guards) {
        const router = createRouter(guards.security)
        router.openapi(triggerRoute, async (c) => {
          const data = await triggerManually(deps, principalOf(c), c.req.valid('param').flowId, c.req.valid('json'))
          return c.json({ data }, 202)
        })
        return [router]
      },
    }
  },
})
