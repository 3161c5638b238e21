import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { principals, type Principal } from '../../../lib/principal.js'
import { createFakeFlows, createFakeRuns, makeFlow } from '../triggers/fakes.js'
import { createSubFlows } from './sub-flows.js'

const sub = makeFlow('another_flow', {}, { id: 'SUB' })
const elsewhere = makeFlow('another_flow', {}, { id: 'FAR', projectId: 'p2' })
const parent = { runId: 'r0', flowId: 'ROOT', depth: 0, chain: [] }

function setup(allowed: (principal: Principal) => boolean) {
  const runs = createFakeRuns(() => ({ steps: {} }))
  const checked: string[] = []
  const subFlows = createSubFlows({
    flows: createFakeFlows([sub, elsewhere]).lookup,
    runs: runs.runs,
    async authorize(principal, permission) {
      checked.push(permission)
      if (!allowed(principal))
        throw new AppError(principal.kind === 'anonymous' ? 'unauthorized' : 'forbidden', `Missing ${permission}`)
    },
  })
  return { subFlows, runs, checked }
}

describe('sub-flows service', () => {
  it("starts the flow as the principal (the sub-run's initiator) when it may execute flows", async () => {
    const { subFlows, runs, checked } = setup(() => true)
    const actor = principals.system('p1', 'test')
    await expect(subFlows.start(actor, { flowId: 'SUB', body: { a: 1 }, wait: false, parent })).resolves.toMatchObject({
      status: 'running',
    })
    expect(checked).toEqual(['system/automate:execute'])
    expect(runs.calls).toEqual([
      expect.objectContaining({ mode: 'start', initiator: actor, options: { depth: 1, parentRunId: 'r0' } }),
    ])
  })
  it('refuses a principal that could not execute a flow through HTTP, before anything runs', async () => {
    const { subFlows, runs } = setup((p) => p.kind === 'system')
    await expect(
      subFlows.start(principals.anonymous('p1'), { flowId: 'SUB', body: {}, wait: true, parent }),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    expect(runs.calls).toEqual([])
  })
  it("looks the flow up in the principal's own project only", async () => {
    const { subFlows, runs } = setup(() => true)
    await expect(
      subFlows.start(principals.system('p1', 'test'), { flowId: 'FAR', body: {}, wait: false, parent }),
    ).rejects.toMatchObject({ code: 'not_found' })
    expect(runs.calls).toEqual([])
  })
})
