import { describe, expect, it } from 'vitest'
import { principals } from '../../../lib/principal.js'
import { maxSubFlowDepth, startSubFlow, type SubFlowCall } from './another-flow.js'
import { createFakeFlows, createFakeRuns, makeFlow } from './fakes.js'

const a = makeFlow('another_flow', {}, { id: 'A' })
const b = makeFlow('another_flow', {}, { id: 'B' })
const c = makeFlow('another_flow', {}, { id: 'C' })
const webhookFlow = makeFlow('webhook', {}, { id: 'W' })
const inactive = makeFlow('another_flow', {}, { id: 'I', status: 'inactive' })
const initiator = principals.system('p1', 'test')

function setup() {
  const flows = createFakeFlows([a, b, c, webhookFlow, inactive])
  const runs = createFakeRuns((call) => ({ steps: { echoed: call.trigger.body } }))
  return { deps: { flows: flows.lookup, runs: runs.runs }, runs }
}
const call = (flowId: string, parent: SubFlowCall['parent'], wait = false): SubFlowCall => ({
  projectId: 'p1',
  flowId,
  parent,
  body: { n: 1 },
  initiator,
  wait,
})

describe('another_flow: startSubFlow', () => {
  it('starts the sub-flow one level deeper, with the chain of flows above it and the parent run', async () => {
    const { deps, runs } = setup()
    expect(await startSubFlow(deps, call('B', { runId: 'r0', flowId: 'ROOT', depth: 0 }))).toEqual({
      runId: 'run1',
      status: 'running',
      outcome: null,
    })
    expect(runs.calls[0]).toMatchObject({
      mode: 'start',
      initiator,
      options: { depth: 1, parentRunId: 'r0' },
      trigger: { type: 'another_flow', event: null, collection: null, method: null, body: { n: 1 }, chain: ['ROOT'] },
    })
    // B, running at depth 1 with chain [ROOT], starts C and waits for it.
    const waited = await startSubFlow(deps, call('C', { runId: 'run1', flowId: 'B', depth: 1, chain: ['ROOT'] }, true))
    expect(waited.outcome).toMatchObject({ status: 'completed', steps: { echoed: { n: 1 } } })
    expect(runs.calls[1]).toMatchObject({
      mode: 'runNow',
      options: { depth: 2, parentRunId: 'run1' },
      trigger: { chain: ['ROOT', 'B'] },
    })
  })

  it(`allows nesting to depth ${maxSubFlowDepth} and refuses the level below it before running`, async () => {
    const { deps, runs } = setup()
    await expect(
      startSubFlow(deps, call('A', { runId: 'r', flowId: 'X', depth: maxSubFlowDepth - 1 })),
    ).resolves.toMatchObject({ status: 'running' })
    await expect(
      startSubFlow(deps, call('A', { runId: 'r', flowId: 'X', depth: maxSubFlowDepth })),
    ).rejects.toMatchObject({ status: 400, code: 'limit_exceeded', details: { limit: 8, depth: 9 } })
    expect(runs.calls).toHaveLength(1)
  })

  it.each([
    ['a flow starting itself', 'A', { runId: 'r', flowId: 'A', depth: 1 }],
    ['A → B → A', 'A', { runId: 'r', flowId: 'B', depth: 1, chain: ['A'] }],
    ['A → B → C → A', 'A', { runId: 'r', flowId: 'C', depth: 2, chain: ['A', 'B'] }],
    ['B → A → C → A, inside a longer chain', 'A', { runId: 'r', flowId: 'C', depth: 3, chain: ['B', 'A'] }],
  ] as const)('refuses a cycle: %s (409, nothing runs)', async (_name, flowId, parent) => {
    const { deps, runs } = setup()
    await expect(startSubFlow(deps, call(flowId, parent))).rejects.toMatchObject({ status: 409, code: 'conflict' })
    expect(runs.calls).toEqual([])
  })

  it('refuses a missing flow (404), a flow of another trigger or an inactive one (409)', async () => {
    const { deps, runs } = setup()
    const parent = { runId: 'r', flowId: 'ROOT', depth: 0 }
    await expect(startSubFlow(deps, call('nope', parent))).rejects.toMatchObject({ status: 404 })
    await expect(startSubFlow(deps, call('W', parent))).rejects.toMatchObject({ status: 409 })
    await expect(startSubFlow(deps, call('I', parent))).rejects.toMatchObject({ status: 409 })
    await expect(startSubFlow(deps, { ...call('A', parent), projectId: 'p2' })).rejects.toMatchObject({ status: 404 })
    expect(runs.calls).toEqual([])
  })
})
