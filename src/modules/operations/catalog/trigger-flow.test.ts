import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import type { Principal } from '../../../lib/principal.js'
import { testContext } from '../test-context.js'
import { StepError } from '../types.js'
import { triggerFlow } from './trigger-flow.js'

type Outcome = {
  status: string
  steps: Record<string, unknown>
  error: { code: string; message: string; statusCode?: number } | null
}

/** A fake ctx.services.subFlows recording each call and answering `answer`. */
function fakeSubFlows(answer: (wait: boolean) => Promise<{ runId: string; status: string; outcome: Outcome | null }>) {
  const calls: { principal: Principal; request: any }[] = []
  return {
    calls,
    services: {
      subFlows: {
        async start(principal: Principal, request: any) {
          calls.push({ principal, request })
          return answer(request.wait)
        },
      },
    },
  }
}
const parse = (config: Record<string, unknown>) => triggerFlow.configSchema.parse(config)
const safe = (config: Record<string, unknown>) => triggerFlow.configSchema.safeParse(config)
const completed = (steps: Record<string, unknown>): Outcome => ({ status: 'completed', steps, error: null })

describe('trigger_flow: config', () => {
  it('needs a flowId (1-100 characters); data is an object ({} by default); async false by default', () => {
    expect(parse({ flowId: 'f1' })).toEqual({ flowId: 'f1', data: {}, async: false })
    expect(safe({}).success).toBe(false)
    expect(safe({ flowId: '' }).success).toBe(false)
    expect(safe({ flowId: 'x'.repeat(100) }).success).toBe(true)
    expect(safe({ flowId: 'x'.repeat(101) }).success).toBe(false)
    expect(safe({ flowId: 'f', data: [1] }).success).toBe(false)
    expect(safe({ flowId: 'f', data: 'text' }).success).toBe(false)
    expect(parse({ flowId: 'f', async: 'true' }).async).toBe(true)
    expect(parse({ flowId: 'f', async: 'false' }).async).toBe(false)
    expect(safe({ flowId: 'f', async: 'yes' }).success).toBe(false)
    expect(safe({ flowId: 'f', other: 1 }).success).toBe(false)
  })
  it('writes: a dry run records it as not run', () => {
    expect(triggerFlow.effects).toBe('writes')
  })
})

describe('trigger_flow: running', () => {
  it('awaited: starts the sub-flow as the run principal with the parent run, depth and chain; outputs its steps', async () => {
    const fake = fakeSubFlows(async () => ({
      runId: 'sub-1',
      status: 'completed',
      outcome: completed({ echo: { n: 1 } }),
    }))
    const { ctx } = testContext({}, { services: fake.services, depth: 2, chain: ['ROOT', 'MID'] })
    expect(await triggerFlow.run(parse({ flowId: 'B', data: { n: 1 } }), ctx)).toEqual({
      runId: 'sub-1',
      status: 'completed',
      async: false,
      output: { echo: { n: 1 } },
    })
    // The run's signal goes along: the parent's timeout or cancel ends the sub-run it waits for.
    expect(fake.calls).toEqual([
      {
        principal: ctx.principal,
        request: {
          flowId: 'B',
          body: { n: 1 },
          wait: true,
          parent: { runId: 'run-1', flowId: 'flow-1', depth: 2, chain: ['ROOT', 'MID'] },
          signal: ctx.signal,
        },
      },
    ])
  })
  it('async: starts it in the background and outputs its run id and status', async () => {
    const fake = fakeSubFlows(async () => ({ runId: 'sub-2', status: 'pending', outcome: null }))
    const { ctx } = testContext({}, { services: fake.services })
    expect(await triggerFlow.run(parse({ flowId: 'B', async: true }), ctx)).toEqual({
      runId: 'sub-2',
      status: 'pending',
      async: true,
    })
    expect(fake.calls[0]!.request.wait).toBe(false)
  })
  it('a sub-run that does not complete fails the step with subflow_failed, its error and status', async () => {
    const fake = fakeSubFlows(async () => ({
      runId: 'sub-3',
      status: 'failed',
      outcome: { status: 'failed', steps: {}, error: { code: 'flow_error', message: 'No stock', statusCode: 409 } },
    }))
    const { ctx } = testContext({}, { services: fake.services })
    const attempt = triggerFlow.run(parse({ flowId: 'B' }), ctx)
    await expect(attempt).rejects.toBeInstanceOf(StepError)
    await expect(attempt).rejects.toMatchObject({
      code: 'subflow_failed',
      statusCode: 409,
      retryable: false,
      details: { runId: 'sub-3', status: 'failed', error: { code: 'flow_error' } },
    })
  })
  it.each([
    [
      'a cycle',
      new AppError('conflict', 'cycle', { reason: 'cycle', chain: ['A', 'B', 'A'] }),
      'subflow_cycle',
      409,
      false,
    ],
    [
      'too deep',
      new AppError('limit_exceeded', 'deep', { reason: 'depth', limit: 8, depth: 9 }),
      'subflow_depth_exceeded',
      400,
      false,
    ],
    ['no execute permission', new AppError('forbidden', 'no'), 'forbidden', 403, false],
    ['an anonymous principal', new AppError('unauthorized', 'who'), 'unauthorized', 401, false],
    ['an unknown flow', new AppError('not_found', 'Flow not found'), 'not_found', 404, false],
    ['an inactive flow', new AppError('conflict', 'inactive'), 'conflict', 409, false],
    ['the runs quota', new AppError('quota_exceeded', 'quota'), 'quota_exceeded', 403, true],
  ] as const)('refused (%s): a typed step error', async (_name, error, code, statusCode, retryable) => {
    const fake = fakeSubFlows(async () => {
      throw error
    })
    const { ctx, lines } = testContext({}, { services: fake.services })
    await expect(triggerFlow.run(parse({ flowId: 'B' }), ctx)).rejects.toMatchObject({
      name: 'StepError',
      code,
      statusCode,
      retryable,
    })
    expect(lines).toEqual([expect.objectContaining({ level: 'error' })])
  })
})
