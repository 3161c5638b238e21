import { z } from 'zod'
import { AsyncLocalStorage } from 'node:async_hooks'
import { AppError, type ErrorCode } from '../../../lib/errors.js'
import { principalSnapshot } from '../../../lib/events/index.js'
import type { ApiRecord, BeforeWrite } from '../../records/index.js'
import type { RunOutcome, TriggerInput } from '../model.js'
import { recordEventsField } from './config-fields.js'
import { defineTrigger, type TriggerDeps } from './define-trigger.js'
import { coversCollection, liveFlow } from './match.js'

/** The step whose output, when a plain object, becomes the incoming values of the write (docs/automation-triggers.md). */
export const filterDataStep = 'data'

// A restore brings deleted_at back to null: it publishes record.update, so record.update flows filter it.
const eventOf = {
  create: 'record.create',
  update: 'record.update',
  delete: 'record.delete',
  restore: 'record.update',
} as const

/** The event_filter trigger's config, checked when a flow is saved (automation spec "Trigger types"). */
export const eventFilterConfig = z.object({ events: recordEventsField }).strict()

/**
 * event_filter: a blocking hook inside the records write pipeline, before anything is written. Each active
 * event_filter flow of the project whose `events` has the write's event and whose collection scope covers
 * it runs now, in the request, one after another in the lookup's order; each sees the values the previous
 * one returned. A run that does not complete (a `stop` with status error, a `throw_error`, any failing
 * step, a timeout) refuses the write with a 4xx carrying the flow's message: nothing is written and no
 * event is published. A completed run whose step `data` output a plain object replaces the incoming values
 * with it (create and update; ignored for delete and restore, which write no values). A flow does not
 * filter the writes its own run makes.
 */
export const eventFilter = defineTrigger({
  type: 'event_filter',
  label: 'Record event (blocking, before the write)',
  blocking: true,
  configSchema: eventFilterConfig,
  start(deps) {
    return { stop: deps.hooks.add((write) => filterWrite(deps, write)) }
  },
})

/**
 * The event_filter flows whose runs are under way in this async context. A write a filter flow's own run
 * makes (a crud step) is not filtered by that flow again: it would start itself without end.
 */
const filtering = new AsyncLocalStorage<ReadonlySet<string>>()

async function filterWrite(deps: TriggerDeps, write: BeforeWrite): Promise<ApiRecord | void> {
  // Every records write passes here: with no event_filter flow in the project this is one cached lookup.
  const flows = await deps.flows.activeByTrigger(write.collection.projectId, 'event_filter')
  if (flows.length === 0) return
  const event = eventOf[write.action]
  let data = write.data
  let changed = false
  const running = filtering.getStore()
  for (const candidate of flows) {
    if (running?.has(candidate.id)) continue
    const live = liveFlow(candidate, 'event_filter', eventFilterConfig)
    if (!live || !live.config.events.includes(event) || !coversCollection(live.definition, write.collection.name))
      continue
    const trigger: TriggerInput = {
      type: 'event_filter',
      event,
      collection: write.collection.name,
      method: null,
      body: {
        projectId: write.collection.projectId,
        collection: write.collection.name,
        action: write.action,
        before: write.before,
        data,
        principal: principalSnapshot(write.principal),
      },
    }
    const inside = new Set(running ?? [])
    inside.add(live.flow.id)
    const outcome = await filtering.run(inside, () => deps.runs.runNow(live.flow, trigger, write.principal))
    if (outcome.status !== 'completed') throw refusal(live.flow.id, outcome)
    const replaced = outcome.steps[filterDataStep]
    if ((write.action === 'create' || write.action === 'update') && isPlainObject(replaced)) {
      data = replaced
      changed = true
    }
  }
  return changed ? data : undefined
}

// The 4xx codes of the catalog by status; any other status a flow asks for (another 4xx, a 5xx) answers 400.
const codeByStatus: ReadonlyMap<number, ErrorCode> = new Map<number, ErrorCode>([
  [400, 'invalid_request'],
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [405, 'method_not_allowed'],
  [408, 'request_timeout'],
  [409, 'conflict'],
  [412, 'precondition_failed'],
  [413, 'payload_too_large'],
  [415, 'unsupported_media_type'],
  [422, 'validation_error'],
  [429, 'rate_limited'],
])

/**
 * The error a refused write answers: the flow's message, the status its `throw_error` asked for when that
 * is a 4xx of the catalog (400 otherwise, and for a `stop` with status error), 408 when the flow timed out.
 */
export function refusal(flowId: string, outcome: RunOutcome): AppError {
  const error = outcome.error
  const message = error?.message || `The write was refused by flow ${flowId} (run ${outcome.status})`
  const status = outcome.status === 'timed_out' ? 408 : (error?.statusCode ?? 400)
  const code = codeByStatus.get(status) ?? 'invalid_request'
  return new AppError(code, message, {
    flowId,
    runId: outcome.runId,
    runStatus: outcome.status,
    ...(error?.code ? { reason: error.code } : {}),
    ...(error?.step ? { step: error.step } : {}),
  })
}

function isPlainObject(value: unknown): value is ApiRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === null
}
