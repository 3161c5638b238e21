import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, tableResolver, type TestServer as Receiver } from '../../src/lib/outbound/test-servers.js'
import { startServer, type TestServer } from '../support/harness.js'
import { signUpOwner, type Account } from '../support/identity.js'
import { accountWithGrants } from './collections-support.js'

/**
 * Saved scripts over real HTTP (automation spec "Scripts"; issue 16 item 4), on SQLite and PostgreSQL:
 * CRUD and its checks, the permission table, POST /scripts/:id/test on mock data, the sandbox escapes of
 * "Must show" through the API (the server answers /health and runs the next script after each), and
 * run_script in a flow with its result at $steps.<key>.output. The sandbox itself: lib/sandbox; the
 * operation with a fake host: catalog/run-script.test.ts.
 */
const BASE = '/api/v1/automate'

let server: TestServer
let receiver: Receiver
let owner: Account
let reader: Account
let executor: Account

beforeAll(async () => {
  receiver = await startTestServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"reached":true}')
  })
  // private.test resolves to a private address; other.test to 127.0.0.1 (refused too: the test instance keeps the outbound rule on).
  server = await startServer(
    {},
    { outbound: { resolve: tableResolver({ 'private.test': ['10.1.2.3'], 'other.test': ['127.0.0.1'] }) } },
  )
  owner = await signUpOwner(server)
  reader = await accountWithGrants(server, owner.token, [{ resource: 'system/automate', action: 'read' }])
  executor = await accountWithGrants(server, owner.token, [{ resource: 'system/automate', action: 'execute' }])
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

const request = (method: string, path: string, token = owner.token, body?: unknown) =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) })
let names = 0
async function saved(body: Record<string, unknown>): Promise<string> {
  const created = await request('POST', `${BASE}/scripts`, owner.token, { name: `script ${++names}`, ...body })
  expect(created.status, created.text).toBe(201)
  return created.body.data.id as string
}
const test = (id: string, body: unknown = {}, token = owner.token) =>
  request('POST', `${BASE}/scripts/${id}/test`, token, body)

describe('scripts CRUD', () => {
  it('creates with defaults, lists, reads, changes and deletes', async () => {
    const created = await request('POST', `${BASE}/scripts`, owner.token, {
      name: 'totals',
      code: 'return input.a + input.b',
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body.data).toEqual({
      id: expect.any(String),
      projectId: expect.any(String),
      name: 'totals',
      description: '',
      code: 'return input.a + input.b',
      allowed_hosts: [],
      max_cpu_ms: 5000,
      max_memory_mb: 64,
      createdBy: owner.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const id = created.body.data.id
    expect(
      (await request('GET', `${BASE}/scripts`, reader.token)).body.data.map((s: { name: string }) => s.name),
    ).toContain('totals')
    expect((await request('GET', `${BASE}/scripts/${id}`, reader.token)).body.data).toMatchObject({ name: 'totals' })
    const patched = await request('PATCH', `${BASE}/scripts/${id}`, owner.token, {
      description: 'adds',
      allowed_hosts: ['*.example.com'],
      max_cpu_ms: 1000,
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.data).toMatchObject({
      name: 'totals',
      description: 'adds',
      allowed_hosts: ['*.example.com'],
      max_cpu_ms: 1000,
      max_memory_mb: 64,
    })
    expect((await request('DELETE', `${BASE}/scripts/${id}`)).status).toBe(200)
    expect((await request('GET', `${BASE}/scripts/${id}`)).body).toMatchObject({ error: 'not_found' })
    expect((await request('DELETE', `${BASE}/scripts/${id}`)).status).toBe(404)
  })
  it('refuses a taken name with 409 conflict, on create and on rename', async () => {
    await saved({ name: 'unique one', code: 'return 1' })
    expect(
      (await request('POST', `${BASE}/scripts`, owner.token, { name: 'unique one', code: 'return 2' })).body,
    ).toMatchObject({ error: 'conflict' })
    const other = await saved({ name: 'unique two', code: 'return 2' })
    const renamed = await request('PATCH', `${BASE}/scripts/${other}`, owner.token, { name: 'unique one' })
    expect([renamed.status, renamed.body.error]).toEqual([409, 'conflict'])
  })
  it('checks each field and bound (±1) with 422 validation_error', async () => {
    const body = { name: 'bounds', code: 'return 1' }
    const cases: [Record<string, unknown>, number][] = [
      [{ max_cpu_ms: 99 }, 422],
      [{ max_cpu_ms: 100 }, 201],
      [{ max_cpu_ms: 30_000 }, 201],
      [{ max_cpu_ms: 30_001 }, 422],
      [{ max_memory_mb: 0 }, 422],
      [{ max_memory_mb: 1 }, 201],
      [{ max_memory_mb: 256 }, 201],
      [{ max_memory_mb: 257 }, 422],
      [{ code: '' }, 422],
      [{ code: 'x'.repeat(100_001) }, 422],
      [{ name: '' }, 422],
      [{ name: 'n'.repeat(101) }, 422],
      [{ allowed_hosts: ['https://x.example.com/'] }, 422],
      [{ allowed_hosts: Array.from({ length: 51 }, (_, i) => `h${i}.test`) }, 422],
      [{ runAs: 'x' }, 422],
    ]
    for (const [change, status] of cases) {
      const reply = await request('POST', `${BASE}/scripts`, owner.token, {
        ...body,
        name: `bounds ${++names}`,
        ...change,
      })
      expect(reply.status, `${JSON.stringify(change).slice(0, 80)}: ${reply.text.slice(0, 200)}`).toBe(status)
      if (status === 422) expect(reply.body.error).toBe('validation_error')
    }
  })
  it('another project sees none of them: list empty; get, patch, delete, test and a flow step by id are 404', async () => {
    const id = await saved({ code: 'return "mine"' })
    const project = await request('POST', '/api/v1/projects', owner.token, { name: `elsewhere ${++names}` })
    expect(project.status, project.text).toBe(201)
    const headers = { 'X-Project-Id': project.body.data.id as string }
    const there = (method: string, path: string, body?: unknown) =>
      server.request(method, path, { token: owner.token, headers, ...(body === undefined ? {} : { body }) })
    expect((await there('GET', `${BASE}/scripts`)).body.data).toEqual([])
    for (const [method, path, body] of [
      ['GET', `${BASE}/scripts/${id}`],
      ['PATCH', `${BASE}/scripts/${id}`, { code: 'return "stolen"' }],
      ['DELETE', `${BASE}/scripts/${id}`],
      ['POST', `${BASE}/scripts/${id}/test`, {}],
    ] as const) {
      expect((await there(method, path, body)).status, `${method} ${path}`).toBe(404)
    }
    const flow = await there('POST', `${BASE}/flows`, {
      name: 'borrow',
      triggerType: 'manual',
      triggerConfig: {},
      operations: [{ key: 'x', type: 'run_script', config: { scriptId: id } }],
    })
    expect(flow.status, flow.text).toBe(201)
    const flowId = flow.body.data.id
    expect((await there('POST', `${BASE}/flows/${flowId}/publish`, { changeSummary: 'v1' })).status).toBe(200)
    expect((await there('PATCH', `${BASE}/flows/${flowId}/status`, { status: 'active' })).status).toBe(200)
    const started = await there('POST', `${BASE}/flows/${flowId}/execute`, {})
    expect(started.status, started.text).toBe(202)
    const deadline = Date.now() + 30_000
    let run = (await there('GET', `${BASE}/runs/${started.body.data.runId}`)).body.data
    while (['pending', 'running'].includes(run.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      run = (await there('GET', `${BASE}/runs/${started.body.data.runId}`)).body.data
    }
    expect(run).toMatchObject({ status: 'failed', error: { code: 'script_not_found', step: 'x' } })
    expect((await test(id)).body.data).toMatchObject({ status: 'completed', output: 'mine' })
  })
  it('keeps to the permission table: read lists, create/update/delete/execute need their own grants', async () => {
    const id = await saved({ code: 'return 1' })
    expect((await request('GET', `${BASE}/scripts`, reader.token)).status).toBe(200)
    for (const [method, path, body] of [
      ['POST', `${BASE}/scripts`, { name: 'no', code: 'return 1' }],
      ['PATCH', `${BASE}/scripts/${id}`, { name: 'no' }],
      ['DELETE', `${BASE}/scripts/${id}`, undefined],
      ['POST', `${BASE}/scripts/${id}/test`, {}],
    ] as const) {
      expect((await request(method, path, reader.token, body)).status, `${method} ${path}`).toBe(403)
    }
    expect((await test(id, {}, executor.token)).body.data).toMatchObject({ status: 'completed', output: 1 })
    expect((await request('GET', `${BASE}/scripts`, executor.token)).status).toBe(403)
  })
})

describe('POST /scripts/:id/test', () => {
  it('runs the script on mock input and context, with its console lines', async () => {
    const id = await saved({
      code: 'console.log("items", input.items.length); return { total: input.items.reduce((s, i) => s + i.price, 0), who: context.user.id, order: context.trigger.body.id }',
    })
    const reply = await test(id, {
      input: { items: [{ price: 2 }, { price: 5 }] },
      context: { trigger: { body: { id: 'o-9' } }, user: { id: 'u-1' } },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.data).toEqual({
      status: 'completed',
      output: { total: 7, who: 'u-1', order: 'o-9' },
      logs: [{ level: 'info', message: 'items 2' }],
      cpuMs: expect.any(Number),
      durationMs: expect.any(Number),
    })
  })
  it('answers a failing script as status failed with the typed code; bad mock data is 422', async () => {
    const id = await saved({ code: 'throw new Error("boom")' })
    expect((await test(id)).body.data).toMatchObject({
      status: 'failed',
      error: { code: 'script_error', message: 'Error: boom' },
    })
    expect((await test(id, { input: 'not an object' })).status).toBe(422)
    expect((await test('missing')).status).toBe(404)
    // No body at all: empty mock data.
    const bare = await server.request(
      'POST',
      `${BASE}/scripts/${await saved({ code: 'return [input, context.steps]' })}/test`,
      { token: owner.token },
    )
    expect([bare.status, bare.body.data?.output]).toEqual([200, [{}, {}]])
  })
})

describe('sandbox escapes through the API (the server stays healthy after each)', () => {
  const healthy = async () => {
    expect((await server.request('GET', '/health')).status).toBe(200)
    const next = await saved({ code: 'return [({}).polluted === undefined, typeof process, 6 * 7]' })
    expect((await test(next)).body.data).toMatchObject({ status: 'completed', output: [true, 'undefined', 42] })
  }
  const cases: { name: string; script: Record<string, unknown>; expect: Record<string, unknown> }[] = [
    {
      name: 'prototype pollution',
      script: { code: 'Object.prototype.polluted = "yes"; Array.prototype.push = null; return ({}).polluted' },
      expect: { status: 'completed', output: 'yes' },
    },
    {
      name: 'constructor.constructor',
      script: { code: 'return (() => {}).constructor.constructor("return typeof process + typeof require")()' },
      expect: { status: 'completed', output: 'undefinedundefined' },
    },
    {
      name: 'an infinite loop (CPU bound)',
      script: { code: 'while (true) {}', max_cpu_ms: 200 },
      expect: { status: 'failed', error: { code: 'script_cpu_limit', message: expect.any(String) } },
    },
    {
      name: 'a 1 GB allocation',
      script: { code: 'const b = new ArrayBuffer(1024 * 1024 * 1024); return b.byteLength' },
      expect: { status: 'failed', error: { code: 'script_memory_limit', message: expect.any(String) } },
    },
    {
      name: 'reading the environment',
      script: { code: 'try { return process.env } catch (e) { return e.name }' },
      expect: { status: 'completed', output: 'ReferenceError' },
    },
    {
      name: 'reading the file system',
      script: { code: 'try { return require("fs").readFileSync("/etc/passwd", "utf8") } catch (e) { return e.name }' },
      expect: { status: 'completed', output: 'ReferenceError' },
    },
  ]
  for (const c of cases) {
    it(c.name, async () => {
      const reply = await test(await saved(c.script))
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body.data).toMatchObject(c.expect)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      await healthy()
    })
  }

  const fetchTo = (url: string) =>
    `try { const r = await fetch(${JSON.stringify(url)}); return await r.json() } catch (e) { return e.code }`
  const fetchCases: { name: string; url: () => string; allowed: string[]; code: string }[] = [
    {
      name: 'fetch to a host outside allowed_hosts',
      url: () => `http://other.test:${receiver.port}/`,
      allowed: ['allowed.test'],
      code: 'domain_not_allowed',
    },
    {
      name: 'fetch with no allowed_hosts',
      url: () => `http://allowed.test:${receiver.port}/`,
      allowed: [],
      code: 'domain_not_allowed',
    },
    {
      name: 'fetch to 127.0.0.1 (even when listed)',
      url: () => `${receiver.origin}/`,
      allowed: ['127.0.0.1'],
      code: 'blocked_address',
    },
    {
      name: 'fetch to a name resolving to a private address (even when listed)',
      url: () => `http://private.test:${receiver.port}/`,
      allowed: ['private.test'],
      code: 'blocked_address',
    },
    {
      name: 'fetch to a name resolving to 127.0.0.1 (even when listed)',
      url: () => `http://other.test:${receiver.port}/`,
      allowed: ['other.test'],
      code: 'blocked_address',
    },
  ]
  for (const c of fetchCases) {
    it(c.name, async () => {
      const before = receiver.received.length
      const reply = await test(await saved({ code: fetchTo(c.url()), allowed_hosts: c.allowed }))
      expect(reply.body.data).toMatchObject({ status: 'completed', output: c.code })
      expect(receiver.received.length).toBe(before)
      await healthy()
    })
  }
})

describe('run_script in a flow', () => {
  async function runFlow(operations: unknown[], payload: unknown = {}) {
    const created = await request('POST', `${BASE}/flows`, owner.token, {
      name: `scripts flow ${++names}`,
      triggerType: 'manual',
      triggerConfig: {},
      operations,
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.data.id
    expect((await request('POST', `${BASE}/flows/${id}/publish`, owner.token, { changeSummary: 'v1' })).status).toBe(
      200,
    )
    expect((await request('PATCH', `${BASE}/flows/${id}/status`, owner.token, { status: 'active' })).status).toBe(200)
    const started = await request('POST', `${BASE}/flows/${id}/execute`, owner.token, payload)
    expect(started.status, started.text).toBe(202)
    const deadline = Date.now() + 30_000
    for (;;) {
      const run = (await request('GET', `${BASE}/runs/${started.body.data.runId}`)).body.data
      if (!['pending', 'running'].includes(run.status)) return run
      if (Date.now() > deadline) throw new Error(`run did not end: ${JSON.stringify(run)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  it("puts the script's result at $steps.<key>.output for the next steps (inline and saved)", async () => {
    const scriptId = await saved({ code: 'return { doubled: input.n * 2 }' })
    const run = await runFlow(
      [
        {
          key: 'calc',
          type: 'run_script',
          config: {
            code: 'return { total: input.qty * input.price }',
            input: { qty: '{{$trigger.body.qty}}', price: 4 },
          },
        },
        { key: 'again', type: 'run_script', config: { scriptId, input: { n: '{{$steps.calc.output.total}}' } } },
        {
          key: 'say',
          type: 'log',
          config: { message: 'total {{$steps.calc.output.total}}, doubled {{$steps.again.output.doubled}}' },
        },
      ],
      { qty: 3 },
    )
    expect(run.status, JSON.stringify(run.error)).toBe('completed')
    expect(run.stepLogs.map((s: { key: string; output: unknown }) => [s.key, s.output])).toEqual([
      ['calc', { output: { total: 12 }, cpuMs: expect.any(Number) }],
      ['again', { output: { doubled: 24 }, cpuMs: expect.any(Number) }],
      ['say', { message: 'total 12, doubled 24', level: 'info' }],
    ])
  })
  it("caps the script's CPU at the project's quota (PATCH /quotas maxScriptCpuMs), whatever timeout_ms says", async () => {
    expect((await request('PATCH', `${BASE}/quotas`, owner.token, { maxScriptCpuMs: 250 })).status).toBe(200)
    try {
      const run = await runFlow([
        { key: 'spin', type: 'run_script', config: { code: 'for (;;) {}', timeout_ms: 30_000 } },
      ])
      expect(run.error).toMatchObject({ code: 'script_cpu_limit', step: 'spin' })
      expect(run.stepLogs[0].error).toMatchObject({ details: { limitMs: 250 } })
    } finally {
      expect((await request('PATCH', `${BASE}/quotas`, owner.token, { maxScriptCpuMs: 5000 })).status).toBe(200)
    }
  })
  it('fails the run with the typed step error when the script hits a bound', async () => {
    const run = await runFlow([{ key: 'spin', type: 'run_script', config: { code: 'for (;;) {}', timeout_ms: 300 } }])
    expect(run.status).toBe('failed')
    expect(run.error).toMatchObject({ code: 'script_cpu_limit', step: 'spin' })
    expect((await server.request('GET', '/health')).status).toBe(200)
  })
})
