import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals } from '../../../lib/principal.js'

import { createFakeFlows, createFakeRuns, makeFlow } from './fakes.js'
import { checkManualRequest, manualConfig, triggerManually, type ManualTrigger } from './manual.js'

const config = (raw: Record<string, unknown>) => manualConfig.parse(raw)
const fieldOf = (run: () => unknown): string | null => {
  try {
    run()
    return null
  } catch (err) {
    if (err instanceof AppError && err.status === 422) return String(err.details.field)
    throw err
  }
}

describe('manual trigger requests', () => {
  const fromTasks = config({
    manual_type: 'collection',
    collections: ['tasks'],
    selection: 'single',
    input_fields: [
      { name: 'reason', type: 'text', required: true },
      { name: 'count', type: 'number' },
      { name: 'notify', type: 'boolean' },
      { name: 'when', type: 'date' },
    ],
    confirm: { message: 'Archive this task?' },
  })
  const ok: ManualTrigger = { collection: 'tasks', ids: ['r1'], input: { reason: 'done' }, confirmed: true }

  it('accepts a request that fits and gives $trigger.body', () => {
    expect(checkManualRequest(fromTasks, ok)).toEqual({ collection: 'tasks', ids: ['r1'], input: { reason: 'done' } })
    expect(checkManualRequest(config({}), {})).toEqual({ collection: null, ids: [], input: {} })
    expect(
      checkManualRequest(config({ selection: 'multiple', manual_type: 'collection' }), {
        collection: 'any',
        ids: ['a', 'b'],
      }).ids,
    ).toEqual(['a', 'b'])
  })

  it.each([
    ['no collection', { ...ok, collection: undefined }, 'collection'],
    ['another collection', { ...ok, collection: 'notes' }, 'collection'],
    ['two records for single', { ...ok, ids: ['r1', 'r2'] }, 'ids'],
    ['no record for single', { ...ok, ids: [] }, 'ids'],
    ['a missing required field', { ...ok, input: {} }, 'input.reason'],
    ['an empty required field', { ...ok, input: { reason: '' } }, 'input.reason'],
    ['a number field given text', { ...ok, input: { reason: 'x', count: 'three' } }, 'input.count'],
    ['a boolean field given a number', { ...ok, input: { reason: 'x', notify: 1 } }, 'input.notify'],
    ['an unknown field', { ...ok, input: { reason: 'x', other: 1 } }, 'input.other'],
    ['no confirmation', { ...ok, confirmed: undefined }, 'confirmed'],
    ['confirmation false', { ...ok, confirmed: false }, 'confirmed'],
  ] as const)('refuses %s (422 naming the field)', (_name, request, field) => {
    expect(fieldOf(() => checkManualRequest(fromTasks, request as ManualTrigger))).toBe(field)
  })

  it('refuses a collection on a global flow and records on a selection-none flow', () => {
    expect(fieldOf(() => checkManualRequest(config({}), { collection: 'tasks' }))).toBe('collection')
    expect(fieldOf(() => checkManualRequest(config({}), { ids: ['r1'] }))).toBe('ids')
    expect(fieldOf(() => checkManualRequest(config({ selection: 'multiple' }), {}))).toBe('ids')
    expect(fieldOf(() => checkManualRequest(config({ confirm: true }), {}))).toBe('confirmed')
  })

  it('checks the permission, the flow and its trigger, then starts a run initiated by the caller', async () => {
    const caller = principals.user(
      { homeProjectId: 'p1', userId: 'u1', roleId: 'r1', roleName: 'editor', superAdmin: false },
      { id: 's', expiresAt: 2e9 },
    )
    const flow = makeFlow('manual', {})
    const webhookFlow = makeFlow('webhook', {})
    const draft = makeFlow('manual', {}, { status: 'draft' })
    const flows = createFakeFlows([flow, webhookFlow, draft])
    const runs = createFakeRuns()
    const asked: string[] = []
    const deps = {
      flows: flows.lookup,
      runs: runs.runs,
      authorize: async (_p: unknown, permission: string) => void asked.push(permission),
    }
    expect(await triggerManually(deps, caller, flow.id, {})).toEqual({
      runId: 'run1',
      flowId: flow.id,
      status: 'running',
      startedAt: new Date(0).toISOString(),
    })
    expect(asked).toEqual(['system/automate:execute'])
    expect(runs.calls[0]).toMatchObject({
      initiator: caller,
      trigger: {
        type: 'manual',
        event: null,
        collection: null,
        method: null,
        body: { collection: null, ids: [], input: {} },
      },
    })
    const status = async (flowId: string) => {
      try {
        await triggerManually(deps, caller, flowId, {})
      } catch (err) {
        return err instanceof AppError ? err.status : err
      }
    }
    expect(await status('missing')).toBe(404)
    expect(await status(webhookFlow.id)).toBe(409)
    expect(await status(draft.id)).toBe(409)
    const denied = {
      ...deps,
      authorize: async () => {
        throw new AppError('forbidden', 'no')
      },
    }
    await expect(triggerManually(denied, caller, flow.id, {})).rejects.toMatchObject({ status: 403 })
    expect(runs.calls).toHaveLength(1)
  })
})
