import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { activeFlow, AUTOMATE, executeToEnd } from './automate-support.js'

/**
 * Issue 25 finding 2 over real HTTP, on SQLite and PostgreSQL: expressions a tenant can make the server
 * evaluate (run_expression in a run and in a dry run, `{{= }}` in any step's config) never take the server
 * down or hold it. The string-doubling expression of the review, for n = 27..40, ends expression_failed
 * and /health answers after each; `$pad("", 50000000, "ab")` is refused at once; a builtin that runs past
 * its time is ended with its evaluator while the server answers. Bounds themselves:
 * src/modules/operations/expressions.test.ts; the evaluator pool: src/lib/child-pool/pool.test.ts.
 */
let server: TestServer
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })
const doubling = (n: number) => `($f := function($s, $n){ $n = 0 ? $length($s) : $f($s & $s, $n - 1) }; $f("x", ${n}))`
const sizes = Array.from({ length: 14 }, (_, i) => 27 + i)
const pad = '$pad("", 50000000, "ab")'
// Linear in the text on RE2 (decision 057), but a program of about 1,000 instructions over 100,000 characters
// takes seconds inside one builtin call: only killing its evaluator stops it.
const endless = '$match($pad("", 100000, "a") & "!", /[a-z]{990}!/)'

async function healthy(): Promise<void> {
  const reply = await server.request('GET', '/health')
  expect(reply.status, reply.text).toBe(200)
}

/** A draft flow of these steps, dry-run once: the test endpoint's answer. */
async function dryRun(operations: unknown[]): Promise<any> {
  const created = await call('POST', `${AUTOMATE}/flows`, {
    name: `dry ${Math.random()}`,
    triggerType: 'manual',
    triggerConfig: {},
    operations,
  })
  expect(created.status, created.text).toBe(201)
  const reply = await call('POST', `${AUTOMATE}/flows/${created.body.data.id}/test`, {})
  expect(reply.status, reply.text).toBe(200)
  await removeFlow(created.body.data.id)
  return reply.body.data
}

/** Flows are removed after use: the project's flow quota (50) is less than the flows this file makes. */
async function removeFlow(id: string): Promise<void> {
  expect((await call('DELETE', `${AUTOMATE}/flows/${id}`)).status).toBe(200)
}

/** An active flow of these steps, run once to its end as the owner, then removed. */
async function runOnce(name: string, operations: unknown[]): Promise<any> {
  const id = await activeFlow(call, name, operations)
  const run = await executeToEnd(call, call, id)
  await removeFlow(id)
  return run
}

const runExpression = (expression: string, extra: Record<string, unknown> = {}) => [
  { key: 'expr', type: 'run_expression', config: { expression, ...extra } },
]
const template = (expression: string) => [{ key: 'note', type: 'log', config: { message: `n={{= ${expression} }}` } }]

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('the string-doubling expression, n = 27..40', () => {
  it.each(sizes)('n = %i: run_expression in a real run fails expression_failed; /health answers', async (n) => {
    const run = await runOnce(`doubling ${n}`, runExpression(doubling(n)))
    expect(run).toMatchObject({ status: 'failed', error: { code: 'expression_failed', step: 'expr' } })
    expect(run.stepLogs[0]).toMatchObject({
      key: 'expr',
      status: 'failed',
      error: { code: 'expression_failed', details: { code: 'limit_exceeded' } },
    })
    await healthy()
  })
  it.each(sizes)(
    'n = %i: a {{= }} template of a step in a real run resolves to empty with expression_failed; /health answers',
    async (n) => {
      const run = await runOnce(`template ${n}`, template(doubling(n)))
      expect(run.stepLogs[0]).toMatchObject({
        key: 'note',
        unresolved: [{ path: 'message', reason: 'expression_failed', message: expect.stringContaining('5000000') }],
      })
      await healthy()
    },
  )
  it.each(sizes)(
    'n = %i: the dry run answers expression_failed, for run_expression and for a template; /health answers',
    async (n) => {
      const tested = await dryRun(runExpression(doubling(n)))
      expect(tested).toMatchObject({
        status: 'failed',
        steps: [{ key: 'expr', status: 'failed', error: { code: 'expression_failed' } }],
      })
      await healthy()
      const templated = await dryRun(template(doubling(n)))
      expect(templated.logs).toContainEqual(
        expect.objectContaining({ step: 'note', data: { reason: 'expression_failed' } }),
      )
      await healthy()
    },
  )
})

describe('builtins a timeout cannot interrupt', () => {
  it('$pad("", 50000000, "ab") is refused before it runs, in run_expression and in a template; /health answers meanwhile', async () => {
    const [tested, health] = await Promise.all([dryRun(runExpression(pad)), server.request('GET', '/health')])
    expect(health.status).toBe(200)
    expect(tested.steps[0]).toMatchObject({
      status: 'failed',
      error: { code: 'expression_failed', message: expect.stringContaining('$pad would be 50000000 characters') },
    })
    const [run, again] = await Promise.all([
      runOnce('pad in a template', template(pad)),
      server.request('GET', '/health'),
    ])
    expect(again.status).toBe(200)
    expect(run.stepLogs[0]).toMatchObject({
      unresolved: [{ reason: 'expression_failed', message: expect.stringContaining('$pad would be') }],
    })
  })
  it('an evaluation still running past its time is ended with its evaluator (expression_timeout); /health answers while it runs', async () => {
    let settled = false
    const testing = dryRun(runExpression(endless, { timeout_ms: 1000 })).finally(() => (settled = true))
    await healthy()
    expect(settled).toBe(false)
    expect((await testing).steps[0]).toMatchObject({
      status: 'failed',
      error: { code: 'expression_timeout', details: { limitMs: 1000 } },
    })
    // The evaluator was replaced: the next expression, and a template, evaluate.
    expect((await dryRun(runExpression('$sum([1, 2, 3])'))).steps[0]).toMatchObject({
      status: 'completed',
      output: { result: 6 },
    })
    expect((await dryRun(template('$uppercase("ok")'))).steps[0]).toMatchObject({ status: 'completed' })
  })
})
