import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type Reply, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { AUTOMATE } from './automate-support.js'

/**
 * Issue 25 finding 2, the evaluators besides JSONata (decision 046), over real HTTP on SQLite and
 * PostgreSQL: what one input could make the server build or compute without bound, each refused in the
 * envelope while /health answers. text_format's regex_replace (a replacement that ended the process),
 * a step config naming one large value many times, and a lens template nesting sections over its rows.
 * JSONata's own: automate-expression-limits.test.ts.
 */
let server: TestServer
let owner: Account

const call = (method: string, path: string, body?: unknown): Promise<Reply> =>
  server.request(method, path, { token: owner.token, body })

async function healthy(): Promise<void> {
  const reply = await server.request('GET', '/health')
  expect(reply.status, reply.text).toBe(200)
}

/** A draft flow of these steps, dry-run once: the test endpoint's answer. */
async function dryRun(name: string, operations: unknown[]): Promise<any> {
  const created = await call('POST', `${AUTOMATE}/flows`, {
    name,
    triggerType: 'manual',
    triggerConfig: {},
    operations,
  })
  expect(created.status, created.text).toBe(201)
  const reply = await call('POST', `${AUTOMATE}/flows/${created.body.data.id}/test`, {})
  expect(reply.status, reply.text).toBe(200)
  return reply.body.data
}

beforeAll(async () => {
  server = await startServer()
  owner = await signUpOwner(server)
})
afterAll(async () => {
  await server?.stop()
})

describe('text_format', () => {
  it("regex_replace with `$'` repeated in the replacement fails the step, and the server lives", async () => {
    const steps = [
      {
        key: 'fmt',
        type: 'text_format',
        config: {
          template: 'a'.repeat(20_000),
          operations: [{ type: 'regex_replace', pattern: 'a', replacement: "$'".repeat(50_000) }],
        },
      },
    ]
    const tested = await dryRun('dollar quote', steps)
    // Refused by its output bound, or (on a machine too busy to collect 20,000 matches in time) its 50 ms bound.
    expect(tested.steps[0]).toMatchObject({
      key: 'fmt',
      status: 'failed',
      error: {
        code: 'text_format_failed',
        message: expect.stringMatching(/the result would be longer than 1000000 characters|ran longer than 50 ms/),
      },
    })
    await healthy()
  })
  it('replace and pad that would build far past the bound are refused before they run', async () => {
    const steps = [
      {
        key: 'many',
        type: 'text_format',
        onError: 'continue',
        config: {
          template: 'a'.repeat(1_000_000),
          operations: [{ type: 'replace', search: 'a', replacement: 'b'.repeat(400) }],
        },
      },
      {
        key: 'wide',
        type: 'text_format',
        config: {
          template: Array.from({ length: 10_000 }, () => 'x').join(','),
          operations: [{ type: 'split' }, { type: 'pad', length: 10_000 }],
        },
      },
    ]
    const tested = await dryRun('amplifiers', steps)
    for (const step of tested.steps)
      expect(step).toMatchObject({
        status: 'failed',
        error: { code: 'text_format_failed', message: expect.stringContaining('would be longer than 1000000') },
      })
    await healthy()
  })
})

describe('templates', () => {
  it('a step naming a large value 40 times fails invalid_config instead of making 40 copies', async () => {
    const steps = [
      { key: 'big', type: 'run_expression', config: { expression: '$pad("", 1000000, "x")' } },
      {
        key: 'copies',
        type: 'set_variable',
        config: { key: 'k', value: Array.from({ length: 40 }, () => '{{$steps.big.result}}') },
      },
      { key: 'once', type: 'set_variable', config: { key: 'k', value: '{{$steps.big.result}}' } },
    ]
    const tested = await dryRun('copies', [
      ...steps.slice(0, 2).map((s, i) => (i === 1 ? { ...s, onError: 'continue' } : s)),
      steps[2],
    ])
    expect(tested.steps[1]).toMatchObject({
      key: 'copies',
      status: 'failed',
      error: { code: 'invalid_config', message: expect.stringContaining('more than 20000000 characters in all') },
    })
    // One copy is fine.
    expect(tested.steps[2]).toMatchObject({ key: 'once', status: 'completed' })
    await healthy()
  })
})

describe('lens sections', () => {
  it('sections nested 20 deep over the rows stop at the render bound: 400 limit_exceeded, /health answers', async () => {
    const created = await call('POST', '/api/v1/collections', {
      name: 'things',
      fields: [{ name: 'title', type: 'text', required: false }],
    })
    expect(created.status, created.text).toBe(201)
    for (let i = 0; i < 10; i++)
      expect((await call('POST', '/api/v1/collections/things/records', { title: `t${i}` })).status).toBe(201)
    // 10 rows, 20 levels: 10^20 passes, writing nothing (a missing name is empty).
    const html = `${'{{#rows}}'.repeat(20)}{{missing}}${'{{/rows}}'.repeat(20)}`
    const lens = await call('POST', '/api/v1/lenses', { name: 'nested', collection: 'things', template: { html } })
    expect(lens.status, lens.text).toBe(201)
    expect((await call('POST', `/api/v1/lenses/${lens.body.data.id}/publish`, { changeSummary: 'v1' })).status).toBe(
      200,
    )
    const [rendered, health] = await Promise.all([
      call('GET', `/api/v1/lenses/${lens.body.data.id}/render?format=html`),
      server.request('GET', '/health'),
    ])
    expect(rendered.status, rendered.text).toBe(400)
    expect(rendered.body).toMatchObject({
      error: 'limit_exceeded',
      message: expect.stringContaining('sections nested over long lists'),
    })
    expect(health.status).toBe(200)
  })
})
