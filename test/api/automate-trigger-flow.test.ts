import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { createAccount, roleId, signUpOwner, type Account } from '../support/identity.js'

/**
 * trigger_flow over real HTTP (automation spec "trigger_flow", "Sub-flow nesting"; docs/operations-catalog.md),
 * on SQLite and PostgreSQL: awaited and background sub-runs with their parent, depth and $trigger.body;
 * the run's principal needs what POST /execute needs (an anonymous webhook caller, or a flow acting under a
 * low role, cannot start a flow that runs as its owner); 8 levels allowed, the 9th refused; cycles refused.
 */
const BASE = '/api/v1/automate'
let server: TestServer
let owner: Account
let editor: Account

const call = (method: string, path: string, token: string | undefined, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token, body })

/** Creates, publishes and activates a flow as the owner; answers its detail. */
async function activeFlow(
  name: string,
  triggerType: string,
  operations: unknown[],
  extra: { runAs?: string; options?: Record<string, unknown> } = {},
) {
  const created = await call('POST', `${BASE}/flows`, owner.token, {
    name,
    triggerType,
    triggerConfig: {},
    operations,
    ...(extra.options ? { options: extra.options } : {}),
  })
  expect(created.status, created.text).toBe(201)
  const id = created.body.data.id as string
  if (extra.runAs) {
    const patched = await call('PATCH', `${BASE}/flows/${id}`, owner.token, { runAs: extra.runAs })
    expect(patched.status, patched.text).toBe(200)
  }
  expect((await call('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'v1' })).status).toBe(200)
  expect((await call('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' })).status).toBe(200)
  return (await call('GET', `${BASE}/flows/${id}`, owner.token)).body.data as {
    id: string
    webhookEndpoint: { token: string } | null
  }
}

const trigger = (key: string, flowId: string, config: Record<string, unknown> = {}) => ({
  key,
  type: 'trigger_flow',
  config: { flowId, ...config },
})
const echo = { key: 'echo', type: 'set_variable', config: { key: 'echo', value: '{{= $trigger }}' } }

async function runsOf(flowId: string): Promise<any[]> {
  const reply = await call('GET', `${BASE}/runs?flow_id=${flowId}&limit=100`, owner.token)
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

/** Waits (generously) until the run has ended and answers its detail. */
async function finished(runId: string): Promise<any> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const run = (await call('GET', `${BASE}/runs/${runId}`, owner.token)).body.data
    if (run && !['pending', 'running'].includes(run.status)) return run
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end: ${JSON.stringify(run)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function execute(flowId: string, token: string, body: unknown = {}): Promise<any> {
  const started = await call('POST', `${BASE}/flows/${flowId}/execute`, token, body)
  expect(started.status, started.text).toBe(202)
  return finished(started.body.data.runId)
}

const stepLog = (run: any, key: string) => run.stepLogs.find((log: any) => log.key === key)

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
  editor = await createAccount(server, owner.token, { role: 'editor' })
})
afterAll(async () => {
  await server?.stop()
})

describe('trigger_flow', () => {
  it("awaited: the sub-flow runs now with data as $trigger.body, one level deeper, and its outputs are the step's", async () => {
    const sub = await activeFlow('Sub', 'another_flow', [echo])
    const top = await activeFlow('Top', 'manual', [
      trigger('go', sub.id, { data: { order: '{{$trigger.body.order}}' } }),
      { key: 'after', type: 'set_variable', config: { key: 'a', value: '{{$steps.go.output.echo.body.order}}' } },
    ])
    const run = await execute(top.id, editor.token, { order: 7 })
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    const go = stepLog(run, 'go').output
    expect(go).toMatchObject({
      status: 'completed',
      async: false,
      output: { echo: { body: { order: 7 }, chain: [top.id] } },
    })
    expect(stepLog(run, 'after').output).toBe(7)
    const [subRun] = await runsOf(sub.id)
    expect(subRun).toMatchObject({
      runId: go.runId,
      status: 'completed',
      triggerType: 'another_flow',
      depth: 1,
      parentRunId: run.runId,
    })
  })

  it('async: the step answers at once with the sub-run, which ends on its own', async () => {
    const sub = await activeFlow('Sub async', 'another_flow', [echo])
    const top = await activeFlow('Top async', 'manual', [trigger('go', sub.id, { async: true, data: { n: 1 } })])
    const run = await execute(top.id, editor.token)
    expect(run.status).toBe('completed')
    const go = stepLog(run, 'go').output
    expect(go).toEqual({ runId: expect.any(String), status: expect.stringMatching(/^(running|pending)$/), async: true })
    const subRun = await finished(go.runId)
    expect(subRun).toMatchObject({ status: 'completed', depth: 1, parentRunId: run.runId })
    expect(stepLog(subRun, 'echo').output).toMatchObject({ body: { n: 1 } })
  })

  it("a parent that times out while it waits cancels the sub-run (the wait counts toward the parent's timeout)", async () => {
    const slow = await activeFlow('Sub slow', 'another_flow', [{ key: 'wait', type: 'delay', config: { ms: 25_000 } }])
    const top = await activeFlow('Top impatient', 'manual', [trigger('go', slow.id)], { options: { timeout_ms: 500 } })
    const run = await execute(top.id, editor.token)
    expect(run).toMatchObject({ status: 'timed_out', error: { code: 'timed_out', step: 'go' } })
    const [subRun] = await runsOf(slow.id)
    const ended = await finished(subRun.runId)
    expect(ended).toMatchObject({ status: 'cancelled', parentRunId: run.runId })
    expect(stepLog(ended, 'wait')).toMatchObject({ status: 'failed', error: { code: 'cancelled' } })
  })

  it('a failing awaited sub-flow fails the step with subflow_failed; a flow of another trigger or inactive is refused', async () => {
    const failing = await activeFlow('Sub fails', 'another_flow', [
      { key: 'no', type: 'throw_error', config: { message: 'Out of stock', statusCode: 409 } },
    ])
    const manual = await activeFlow('Not a sub-flow', 'manual', [echo])
    const top = await activeFlow('Top failing', 'manual', [trigger('go', failing.id)])
    const run = await execute(top.id, editor.token)
    expect(run).toMatchObject({ status: 'failed', error: { code: 'subflow_failed', step: 'go', statusCode: 409 } })
    expect(stepLog(run, 'go').error).toMatchObject({
      code: 'subflow_failed',
      details: { status: 'failed', error: { code: 'flow_error', message: 'Out of stock' } },
    })
    const wrong = await activeFlow('Top wrong', 'manual', [trigger('go', manual.id)])
    expect(await execute(wrong.id, editor.token)).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', step: 'go' },
    })
    const missing = await activeFlow('Top missing', 'manual', [trigger('go', 'f'.repeat(32))])
    expect(await execute(missing.id, editor.token)).toMatchObject({
      status: 'failed',
      error: { code: 'not_found', step: 'go' },
    })
    expect(await runsOf(manual.id)).toEqual([])
  })

  describe("the run's principal must be allowed to execute flows (as POST /execute requires)", () => {
    // The target runs as its owner: whoever starts it borrows the owner's rights, so starting it must need execute.
    let privileged: { id: string }
    beforeAll(async () => {
      privileged = await activeFlow('Runs as the owner', 'another_flow', [echo], { runAs: 'flow_owner' })
    })

    it('an anonymous webhook caller cannot start it through a flow acting for them', async () => {
      const hook = await activeFlow('Public hook', 'webhook', [trigger('go', privileged.id)])
      const reply = await server.request('POST', `${BASE}/webhook/${hook.webhookEndpoint!.token}`, { body: {} })
      expect(reply.status, reply.text).toBe(202)
      const run = await finished(reply.body.runId)
      expect(run.actingAs).toMatchObject({ kind: 'anonymous' })
      expect(run.status).toBe('failed')
      expect(run.error).toMatchObject({ code: expect.stringMatching(/^(unauthorized|forbidden)$/), step: 'go' })
      expect(await runsOf(privileged.id)).toEqual([])
    })

    it('a flow acting under the viewer role cannot start it either', async () => {
      const viewerRole = await roleId(server, owner.token, 'viewer')
      const low = await activeFlow('Acts as viewer', 'manual', [trigger('go', privileged.id)], {
        runAs: `role:${viewerRole}`,
      })
      const run = await execute(low.id, owner.token)
      expect(run.actingAs).toMatchObject({ roleId: viewerRole })
      expect(run).toMatchObject({ status: 'failed', error: { code: 'forbidden', step: 'go' } })
      expect(await runsOf(privileged.id)).toEqual([])
    })

    it('an editor (who may execute flows through HTTP) can, and the sub-run acts as the owner', async () => {
      const top = await activeFlow('Editor top', 'manual', [trigger('go', privileged.id)])
      const run = await execute(top.id, editor.token)
      expect(run.status, JSON.stringify(run.error)).toBe('completed')
      const subRun = await finished(stepLog(run, 'go').output.runId)
      expect(subRun.actingAs).toMatchObject({ kind: 'user', userId: owner.id })
    })
  })

  it('nests 8 levels and refuses the 9th with subflow_depth_exceeded, before it runs', async () => {
    // level9 would run at depth 9; level1..level8 are allowed.
    const level9 = await activeFlow('Level 9', 'another_flow', [echo])
    let next = level9.id
    const levels: string[] = []
    for (let level = 8; level >= 1; level--) {
      const flow = await activeFlow(`Level ${level}`, 'another_flow', [trigger(`to_${level + 1}`, next)])
      levels.unshift(flow.id)
      next = flow.id
    }
    const top = await activeFlow('Depth top', 'manual', [trigger('to_1', next)])
    const run = await execute(top.id, editor.token)
    expect(run).toMatchObject({ status: 'failed', error: { code: 'subflow_failed', step: 'to_1' } })
    const [deepest] = await runsOf(levels[7]!)
    expect(deepest).toMatchObject({ depth: 8, status: 'failed' })
    const detail = await finished(deepest.runId)
    expect(detail.error).toMatchObject({ code: 'subflow_depth_exceeded', step: 'to_9' })
    expect(await runsOf(level9.id)).toEqual([])
  })

  it('refuses a cycle (A → B → A) with subflow_cycle, before the second A runs', async () => {
    // B is made first pointing nowhere useful, then A → B, then B is changed to point back at A.
    const b = await activeFlow('Cycle B', 'another_flow', [echo])
    const a = await activeFlow('Cycle A', 'another_flow', [trigger('to_b', b.id)])
    expect(
      (await call('PATCH', `${BASE}/flows/${b.id}`, owner.token, { operations: [trigger('to_a', a.id)] })).status,
    ).toBe(200)
    expect((await call('POST', `${BASE}/flows/${b.id}/publish`, owner.token, { changeSummary: 'cycle' })).status).toBe(
      200,
    )
    const top = await activeFlow('Cycle top', 'manual', [trigger('to_a', a.id)])
    const run = await execute(top.id, editor.token)
    expect(run).toMatchObject({ status: 'failed', error: { code: 'subflow_failed' } })
    const aRuns = await runsOf(a.id)
    const bRuns = await runsOf(b.id)
    expect(aRuns).toHaveLength(1)
    expect(bRuns).toHaveLength(1)
    const bRun = await finished(bRuns[0].runId)
    expect(bRun.error).toMatchObject({ code: 'subflow_cycle', step: 'to_a' })
    expect(stepLog(bRun, 'to_a').error).toMatchObject({
      code: 'subflow_cycle',
      details: { chain: [top.id, a.id, b.id, a.id] },
    })
  })

  it('a dry run records trigger_flow as not run and starts nothing', async () => {
    const sub = await activeFlow('Sub dry', 'another_flow', [echo])
    const top = await activeFlow('Top dry', 'manual', [trigger('go', sub.id)])
    const reply = await call('POST', `${BASE}/flows/${top.id}/test`, editor.token, {})
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data.steps).toEqual([expect.objectContaining({ key: 'go', status: 'skipped' })])
    expect(await runsOf(sub.id)).toEqual([])
  })
})
