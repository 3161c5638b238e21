import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { createOutboundClient, type OutboundClient } from '../../../lib/outbound/index.js'
import { startTestServer, tableResolver, type TestServer } from '../../../lib/outbound/test-servers.js'
import type { RunnableScript, ScriptHost } from '../scripts.js'
import { testContext, testServices } from '../test-context.js'
import { StepError } from '../types.js'
import { runScript } from './run-script.js'

let server: TestServer
let redirector: TestServer
beforeAll(async () => {
  server = await startTestServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ path: req.path, method: req.method, body: req.body }))
  })
  redirector = await startTestServer((_req, res) => {
    res.writeHead(302, { location: `${server.origin}/secret` })
    res.end()
  })
})
afterAll(async () => {
  await server.close()
  await redirector.close()
})

// Made-up names: allowed.test and other.test answer 127.0.0.1 (let through when private addresses are allowed),
// private.test resolves to a private address (refused when they are not).
const resolve = tableResolver({
  'allowed.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'private.test': ['10.0.0.7', '127.0.0.1'],
})
const open = createOutboundClient({ allowPrivateNetwork: true, resolve })
const guarded = createOutboundClient({ allowPrivateNetwork: false, resolve })

const saved: RunnableScript = {
  id: 's1',
  code: 'return { saved: input.n + 1 }',
  allowedHosts: ['allowed.test'],
  maxCpuMs: 30_000,
  maxMemoryMb: 32,
}
function host(
  outbound: OutboundClient,
  options: { quotaMs?: number; scripts?: Record<string, RunnableScript> } = {},
): ScriptHost {
  const scripts = options.scripts ?? { s1: saved }
  return {
    find: async (_principal, id) => {
      const found = scripts[id]
      if (!found) throw new AppError('not_found', 'Script not found')
      return found
    },
    cpuQuotaMs: async () => options.quotaMs ?? 20_000,
    outbound,
  }
}
function context(scriptHost: ScriptHost, data: Record<string, unknown> = {}) {
  const made = testContext(data)
  return { ...made, ctx: { ...made.ctx, services: testServices({ scripts: scriptHost }) } }
}
const run = (config: Record<string, unknown>, scriptHost = host(open), data: Record<string, unknown> = {}) => {
  const { ctx, lines } = context(scriptHost, data)
  return { result: runScript.run(runScript.configSchema.parse(config), ctx), lines }
}
const failure = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(StepError)
  return err as StepError
}

describe('run_script config', () => {
  const valid = { code: 'return 1' }
  it('needs exactly one of code and scriptId', () => {
    expect(runScript.configSchema.safeParse({}).success).toBe(false)
    expect(runScript.configSchema.safeParse({ code: 'return 1', scriptId: 's1' }).success).toBe(false)
    expect(runScript.configSchema.safeParse({ scriptId: 's1' }).success).toBe(true)
    expect(runScript.configSchema.safeParse({ code: '' }).success).toBe(false)
  })
  it('defaults: input {}, timeout_ms 30000, allowed_domains [] (every fetch blocked)', () => {
    expect(runScript.configSchema.parse(valid)).toEqual({
      code: 'return 1',
      input: {},
      timeout_ms: 30_000,
      allowed_domains: [],
    })
  })
  it('timeout_ms is 100-30000 (each bound ±1)', () => {
    for (const [ms, ok] of [
      [99, false],
      [100, true],
      [101, true],
      [29_999, true],
      [30_000, true],
      [30_001, false],
      ['500', true],
      [100.5, false],
    ] as const) {
      expect(runScript.configSchema.safeParse({ ...valid, timeout_ms: ms }).success, String(ms)).toBe(ok)
    }
  })
  it('code is at most 100,000 characters; allowed_domains at most 50 host names', () => {
    expect(runScript.configSchema.safeParse({ code: 'x'.repeat(100_000) }).success).toBe(true)
    expect(runScript.configSchema.safeParse({ code: 'x'.repeat(100_001) }).success).toBe(false)
    const hosts = (n: number) => Array.from({ length: n }, (_, i) => `h${i}.example.com`)
    expect(runScript.configSchema.safeParse({ ...valid, allowed_domains: hosts(50) }).success).toBe(true)
    expect(runScript.configSchema.safeParse({ ...valid, allowed_domains: hosts(51) }).success).toBe(false)
    expect(
      runScript.configSchema.safeParse({ ...valid, allowed_domains: ['*.example.com', 'api.example.com', '10.0.0.1'] })
        .success,
    ).toBe(true)
    expect(runScript.configSchema.safeParse({ ...valid, allowed_domains: ['http://example.com/'] }).success).toBe(false)
  })
  it('code is never a template (raw): {{ in JavaScript stays as written', () => {
    expect(runScript.rawPaths).toContain('code')
  })
})

describe('run_script', () => {
  it('outputs what the script returns at output, with input and the run context, and logs its console', async () => {
    const { result, lines } = run(
      {
        code: 'console.log("total", input.a + input.b); return { sum: input.a + input.b, id: context.trigger.body.id, prev: context.steps.calc.result }',
        input: { a: 2, b: 3 },
      },
      host(open),
      {
        $trigger: { body: { id: 'o-1' } },
        $steps: { calc: { result: 9 } },
      },
    )
    expect(await result).toMatchObject({ output: { sum: 5, id: 'o-1', prev: 9 } })
    expect(lines).toEqual([{ level: 'info', message: 'total 5' }])
  })
  it('runs a saved script by scriptId with its own bounds', async () => {
    expect(await run({ scriptId: 's1', input: { n: 1 } }).result).toMatchObject({ output: { saved: 2 } })
  })
  it('an unknown (or hidden) saved script is script_not_found', async () => {
    expect(await failure(run({ scriptId: 'nope' }).result)).toMatchObject({
      code: 'script_not_found',
      retryable: false,
    })
  })
  it('a thrown error is script_error with its name and message, not retried', async () => {
    expect(await failure(run({ code: 'throw new RangeError("bad input")' }).result)).toMatchObject({
      code: 'script_error',
      message: 'RangeError: bad input',
      retryable: false,
    })
  })
  it('an infinite loop ends at the CPU bound as script_cpu_limit; timeout_ms is capped at the project quota', async () => {
    const err = await failure(run({ code: 'while (true) {}', timeout_ms: 30_000 }, host(open, { quotaMs: 200 })).result)
    expect(err).toMatchObject({ code: 'script_cpu_limit', retryable: false, details: { limitMs: 200 } })
  })
  it("a saved script's max_cpu_ms bounds it below the quota", async () => {
    const looping = { ...saved, id: 'loop', code: 'for (;;) {}', maxCpuMs: 150 }
    const err = await failure(run({ scriptId: 'loop' }, host(open, { scripts: { loop: looping } })).result)
    expect(err).toMatchObject({ code: 'script_cpu_limit', details: { limitMs: 150 } })
  })
  it('a 1 GB allocation is script_memory_limit', async () => {
    expect(await failure(run({ code: 'return new Uint8Array(1024 * 1024 * 1024).length' }).result)).toMatchObject({
      code: 'script_memory_limit',
    })
  })
})

describe('run_script fetch', () => {
  const fetchCode = (url: string) =>
    `try { const r = await fetch(${JSON.stringify(url)}, { method: 'POST', body: { n: 1 } }); return { status: r.status, body: await r.json() } } catch (e) { return { refused: e.code } }`

  it('reaches a host in allowed_domains through lib/outbound', async () => {
    const before = server.received.length
    const { result } = run({
      code: fetchCode(`http://allowed.test:${server.port}/hook`),
      allowed_domains: ['allowed.test'],
    })
    expect(await result).toMatchObject({
      output: { status: 200, body: { path: '/hook', method: 'POST', body: '{"n":1}' } },
    })
    expect(server.received.length).toBe(before + 1)
  })
  it('refuses a host outside allowed_domains (and everything when it is empty) before any request', async () => {
    const before = server.received.length
    expect(
      await run({ code: fetchCode(`http://other.test:${server.port}/x`), allowed_domains: ['allowed.test'] }).result,
    ).toMatchObject({ output: { refused: 'domain_not_allowed' } })
    expect(await run({ code: fetchCode(`http://allowed.test:${server.port}/x`) }).result).toMatchObject({
      output: { refused: 'domain_not_allowed' },
    })
    expect(
      await run({ code: fetchCode(`http://sub.allowed.test:${server.port}/x`), allowed_domains: ['allowed.test'] })
        .result,
    ).toMatchObject({ output: { refused: 'domain_not_allowed' } })
    expect(server.received.length).toBe(before)
  })
  it('refuses 127.0.0.1 and a name resolving to a private address even when allowed_domains lists them', async () => {
    const before = server.received.length
    expect(
      await run({ code: fetchCode(`http://127.0.0.1:${server.port}/x`), allowed_domains: ['127.0.0.1'] }, host(guarded))
        .result,
    ).toMatchObject({ output: { refused: 'blocked_address' } })
    expect(
      await run(
        { code: fetchCode(`http://private.test:${server.port}/x`), allowed_domains: ['private.test'] },
        host(guarded),
      ).result,
    ).toMatchObject({ output: { refused: 'blocked_address' } })
    expect(
      await run({ code: fetchCode(`http://localhost:${server.port}/x`), allowed_domains: ['localhost'] }, host(guarded))
        .result,
    ).toMatchObject({ output: { refused: 'blocked_address' } })
    expect(server.received.length).toBe(before)
  })
  it('does not follow a redirect out of allowed_domains: the script gets the 302', async () => {
    const before = server.received.length
    const code = `const r = await fetch(${JSON.stringify(`http://allowed.test:${redirector.port}/go`)}); return { status: r.status, location: r.headers.location }`
    expect(await run({ code, allowed_domains: ['allowed.test'] }).result).toMatchObject({
      output: { status: 302, location: `${server.origin}/secret` },
    })
    expect(server.received.length).toBe(before)
  })
  it("a saved script fetches only hosts both the step's allowed_domains and its allowed_hosts name", async () => {
    const fetching = {
      ...saved,
      id: 'f',
      code: fetchCode(`http://other.test:${server.port}/x`),
      allowedHosts: ['allowed.test'],
    }
    const scriptHost = host(open, { scripts: { f: fetching } })
    expect(await run({ scriptId: 'f', allowed_domains: ['other.test'] }, scriptHost).result).toMatchObject({
      output: { refused: 'domain_not_allowed' },
    })
  })
  it('an uncaught refusal fails the step as script_error naming it', async () => {
    const err = await failure(
      run({ code: `await fetch('http://other.test/')`, allowed_domains: ['allowed.test'] }).result,
    )
    expect(err).toMatchObject({
      code: 'script_error',
      message: expect.stringContaining("'other.test' is not in allowed_domains"),
    })
  })
})
