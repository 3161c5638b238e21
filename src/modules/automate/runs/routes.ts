import {
  createRouter,
  defineRoute,
  errorResponses,
  jsonContent,
  principalOf,
  queryInteger,
  z,
  type Security,
} from '../../../lib/http/index.js'
import { IdempotencyHeaders, replayedHeaders } from '../idempotency.js'
import { runStatuses } from '../model.js'
import type { RunsService } from './runs-service.js'

const tags = ['Automation runs']
const resource = 'system/automate'
const base = '/api/v1/automate'
const RunParams = z.object({ runId: z.string().min(1).max(64) })
const FlowParams = z.object({ flowId: z.string().min(1).max(64) })
const Payload = z.unknown()
const optionalPayload = { body: { required: false, content: { 'application/json': { schema: Payload } } } }
const PageQuery = z.object({
  page: queryInteger({ min: 1, default: 1 }),
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(runStatuses).optional(),
})
const ListQuery = PageQuery.extend({ flow_id: z.string().min(1).max(64).optional() })

const RunSchema = z
  .object({
    runId: z.string(),
    flowId: z.string(),
    version: z.number(),
    status: z.enum(runStatuses),
    triggerType: z.string(),
    error: z.unknown(),
    depth: z.number(),
    parentRunId: z.string().nullable(),
    retryOf: z.string().nullable().openapi({ description: 'The run this one retries, else null' }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    durationMs: z.number().nullable(),
  })
  .openapi('FlowRun')
const StepLogSchema = z
  .object({
    position: z.number(),
    key: z.string(),
    type: z.string(),
    status: z.string(),
    input: z.unknown(),
    output: z.unknown(),
    error: z.unknown(),
    logs: z.array(z.unknown()),
    unresolved: z.array(z.unknown()),
    attempts: z.number(),
    startedAt: z.string(),
    durationMs: z.number(),
  })
  .openapi('FlowStepLog')
const Identity = z.object({ kind: z.string(), userId: z.string().nullable(), roleId: z.string().nullable() })
const RunDetailSchema = RunSchema.extend({
  trigger: z.unknown(),
  actingAs: Identity.extend({
    cappedBy: Identity.nullable().openapi({
      description: 'Whom the run never acted beyond (its publisher); null when not capped',
    }),
  }),
  redacted: z.boolean().openapi({
    description:
      "true: the trigger's body and the steps' input, output and logs are left out, as the caller could not read all the run read (decision 045)",
  }),
  stepLogs: z.array(StepLogSchema),
})
const RunPage = z.object({
  data: z.array(RunSchema),
  total: z.number(),
  page: z.number(),
  limit: z.number(),
  hasMore: z.boolean(),
})
const Started = z.object({
  data: z.object({
    runId: z.string(),
    flowId: z.string(),
    status: z.enum(runStatuses),
    startedAt: z.string(),
    repeated: z.literal(true).optional().openapi({ description: "An Idempotency-Key repeated: the first call's run" }),
  }),
})
const DryRun = z.object({
  data: z.object({
    runId: z.string(),
    status: z.enum(runStatuses),
    dryRun: z.literal(true),
    error: z.unknown(),
    steps: z.array(
      z.object({
        key: z.string(),
        type: z.string(),
        status: z.string(),
        input: z.unknown().openapi({ description: 'The resolved config (templates applied), credentials masked' }),
        output: z.unknown(),
        durationMs: z.number(),
        error: z.unknown().optional(),
      }),
    ),
    logs: z.array(z.unknown()),
  }),
})
const Success = z.object({ success: z.literal(true) })
const readErrors = ['invalid_request', 'unauthorized', 'forbidden'] as const

const executeFlow = defineRoute({
  method: 'post',
  path: `${base}/flows/{flowId}/execute`,
  operationId: 'automateFlows.execute',
  summary: "Run the flow's published version in the background; any JSON body becomes $trigger.body",
  tags,
  permission: `${resource}:execute`,
  request: { params: FlowParams, headers: IdempotencyHeaders, ...optionalPayload },
  responses: {
    202: jsonContent(Started, 'Started (running, or pending while a concurrency place is taken)'),
    ...errorResponses(...readErrors, 'not_found', 'conflict', 'quota_exceeded', 'rate_limited', 'too_many_requests'),
  },
})
const testFlow = defineRoute({
  method: 'post',
  path: `${base}/flows/{flowId}/test`,
  operationId: 'automateFlows.test',
  summary: "Dry-run the flow's draft: a trace of every step, nothing written anywhere",
  tags,
  permission: `${resource}:execute`,
  request: { params: FlowParams, ...optionalPayload },
  responses: { 200: jsonContent(DryRun, 'The dry run'), ...errorResponses(...readErrors, 'not_found') },
})
const flowRuns = defineRoute({
  method: 'get',
  path: `${base}/flows/{flowId}/runs`,
  operationId: 'automateFlows.runs',
  summary: 'Runs of one flow, newest first',
  tags,
  permission: `${resource}:read`,
  request: { params: FlowParams, query: PageQuery },
  responses: { 200: jsonContent(RunPage, 'A page of runs'), ...errorResponses(...readErrors, 'not_found') },
})
const listRuns = defineRoute({
  method: 'get',
  path: `${base}/runs`,
  operationId: 'automateRuns.list',
  summary: "The project's runs, newest first",
  tags,
  permission: `${resource}:read`,
  request: { query: ListQuery },
  responses: { 200: jsonContent(RunPage, 'A page of runs'), ...errorResponses(...readErrors) },
})
const getRun = defineRoute({
  method: 'get',
  path: `${base}/runs/{runId}`,
  operationId: 'automateRuns.get',
  summary: 'One run with its step logs (credentials masked)',
  tags,
  permission: `${resource}:read`,
  request: { params: RunParams },
  responses: {
    200: jsonContent(z.object({ data: RunDetailSchema }), 'The run'),
    ...errorResponses(...readErrors, 'not_found'),
  },
})
const deleteRun = defineRoute({
  method: 'delete',
  path: `${base}/runs/{runId}`,
  operationId: 'automateRuns.delete',
  summary: 'Delete a run and its step logs',
  tags,
  permission: `${resource}:delete`,
  request: { params: RunParams },
  responses: { 200: jsonContent(Success, 'Deleted'), ...errorResponses(...readErrors, 'not_found') },
})
const cancelRun = defineRoute({
  method: 'post',
  path: `${base}/runs/{runId}/cancel`,
  operationId: 'automateRuns.cancel',
  summary: 'Cancel a pending or running run, on whichever instance runs it',
  tags,
  permission: `${resource}:write`,
  request: { params: RunParams },
  responses: { 200: jsonContent(Success, 'Cancelled'), ...errorResponses(...readErrors, 'not_found') },
})
const retryRun = defineRoute({
  method: 'post',
  path: `${base}/runs/{runId}/retry`,
  operationId: 'automateRuns.retry',
  summary: 'Start a failed, cancelled or timed-out run again: its version, its trigger payload, linked by retryOf',
  tags,
  permission: `${resource}:execute`,
  request: { params: RunParams },
  responses: {
    202: jsonContent(Started, 'The new run'),
    ...errorResponses(...readErrors, 'not_found', 'conflict', 'quota_exceeded', 'too_many_requests'),
  },
})
const cleanupStale = defineRoute({
  method: 'post',
  path: `${base}/runs/cleanup-stale`,
  operationId: 'automateRuns.cleanupStale',
  summary:
    'Take over runs whose instance stopped renewing their lease: each is queued again, resumed, or ends interrupted',
  tags,
  permission: `${resource}:write`,
  responses: {
    200: jsonContent(z.object({ success: z.literal(true), reaped: z.number() }), 'Reaped'),
    ...errorResponses(...readErrors),
  },
})

/** The runs API, execute and test under /api/v1/automate (automation spec "Runs"); the /api/ alias is mapped by the HTTP layer. */
export function runsRoutes(runs: RunsService, security: Security) {
  const router = createRouter(security)
  router.openapi(executeFlow, async (c) => {
    const data = await runs.execute(principalOf(c), c.req.valid('param').flowId, c.req.valid('json'), {
      idempotencyKey: c.req.valid('header')['idempotency-key'],
    })
    return c.json({ data }, 202, replayedHeaders(data))
  })
  router.openapi(testFlow, async (c) =>
    c.json({ data: await runs.test(principalOf(c), c.req.valid('param').flowId, c.req.valid('json')) }, 200),
  )
  router.openapi(flowRuns, async (c) =>
    c.json(await runs.listForFlow(principalOf(c), c.req.valid('param').flowId, c.req.valid('query')), 200),
  )
  router.openapi(listRuns, async (c) => {
    const { flow_id: flowId, ...query } = c.req.valid('query')
    return c.json(await runs.list(principalOf(c), { ...query, flowId }), 200)
  })
  router.openapi(getRun, async (c) => c.json({ data: await runs.get(principalOf(c), c.req.valid('param').runId) }, 200))
  router.openapi(deleteRun, async (c) => {
    await runs.delete(principalOf(c), c.req.valid('param').runId)
    return c.json({ success: true as const }, 200)
  })
  router.openapi(cancelRun, async (c) => {
    await runs.cancel(principalOf(c), c.req.valid('param').runId)
    return c.json({ success: true as const }, 200)
  })
  router.openapi(retryRun, async (c) =>
    c.json({ data: await runs.retry(principalOf(c), c.req.valid('param').runId) }, 202),
  )
  router.openapi(cleanupStale, async (c) =>
    c.json({ success: true as const, ...(await runs.cleanupStale(principalOf(c))) }, 200),
  )
  return router
}
