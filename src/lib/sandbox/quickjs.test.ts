import { describe, expect, it } from 'vitest'
import { linearMemoryBytes } from './memory.js'
import { runInSandbox, SandboxFetchError, type SandboxOptions } from './quickjs.js'

// Bounds are generous for a slow, shared machine; the assertions are on what the script saw or why it stopped, never on time.
const base = {
  input: { n: 2 },
  context: { trigger: { body: { id: 7 } } },
  cpuMs: 1000,
  timeoutMs: 20_000,
  memoryBytes: 32 * 1024 * 1024,
} satisfies Omit<SandboxOptions, 'code'>
const run = (code: string, options: Partial<SandboxOptions> = {}) => runInSandbox({ ...base, ...options, code })

describe('runInSandbox: a script', () => {
  it('returns a JSON value from input and context, and keeps console lines', async () => {
    const result = await run(
      'console.log("n is", input.n); console.warn({ a: 1 }); return { double: input.n * 2, id: context.trigger.body.id }',
    )
    expect(result).toMatchObject({ ok: true, value: { double: 4, id: 7 } })
    expect(result.logs).toEqual([
      { level: 'info', message: 'n is 2' },
      { level: 'warn', message: '{"a":1}' },
    ])
  })
  it('may be asynchronous; undefined and functions come out as null', async () => {
    expect(await run('await null; return await Promise.resolve([1, 2])')).toMatchObject({ ok: true, value: [1, 2] })
    expect(await run('return undefined')).toMatchObject({ ok: true, value: null })
    expect(await run('return () => 1')).toMatchObject({ ok: true, value: null })
  })
  it('fails with its own exception, or a syntax error', async () => {
    expect(await run('throw new TypeError("nope")')).toMatchObject({
      ok: false,
      kind: 'thrown',
      name: 'TypeError',
      message: 'nope',
    })
    expect(await run('return (')).toMatchObject({ ok: false, kind: 'syntax', name: 'SyntaxError' })
    expect(await run('await new Promise(() => {})')).toMatchObject({ ok: false, kind: 'stalled' })
  })
  it('refuses a result over the output bound', async () => {
    expect(await run('return "y".repeat(2000)', { maxOutputBytes: 1000 })).toMatchObject({ ok: false, kind: 'output' })
  })
})

/** Ways to read the host's environment and files (the last ones reach `process` through eval or a constructor). */
const envTries = `      const tries = [
        () => process.env.PLINTH_SANDBOX_CANARY,
        () => require('fs').readFileSync('/etc/passwd', 'utf8'),
        () => import('fs'),
        () => eval('process').env,
        () => globalThis.constructor.constructor('return process')().env,
      ]
      const out = []
      for (const t of tries) { try { const v = await t(); out.push(typeof v === 'string' ? v : 'no') } catch (e) { out.push(e.name) } }
      return out`

describe('runInSandbox: escapes (each must fail inside the sandbox, and the host carries on)', () => {
  it('sees no host objects: process, require, module, Buffer, timers, WebAssembly, std/os', async () => {
    const result = await run(
      'return [typeof process, typeof require, typeof module, typeof Buffer, typeof setTimeout, typeof WebAssembly, typeof std, typeof os, typeof globalThis.global]',
    )
    expect(result).toMatchObject({ ok: true, value: Array(9).fill('undefined') })
  })
  it('constructor.constructor compiles inside the sandbox: no process, no env', async () => {
    const code = `
      const F = (function () {}).constructor.constructor
      const viaFunction = F('return typeof process')()
      const viaAsync = (async () => {}).constructor('return typeof process')
      let env = 'none'
      try { env = F('return process.env')() } catch (e) { env = e.name }
      return [viaFunction, await viaAsync(), env, typeof this?.process]`
    expect(await run(code)).toMatchObject({
      ok: true,
      value: ['undefined', 'undefined', 'ReferenceError', 'undefined'],
    })
  })
  it('reaches neither the environment nor the file system', async () => {
    process.env.PLINTH_SANDBOX_CANARY = 'canary-secret'
    const result = await run(envTries)
    delete process.env.PLINTH_SANDBOX_CANARY
    expect(result.ok).toBe(true)
    expect(JSON.stringify(result)).not.toContain('canary-secret')
  })
  it('control: the same tries run on the host (no sandbox) do read the environment, so the test above can fail', async () => {
    process.env.PLINTH_SANDBOX_CANARY = 'canary-secret'
    const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => () => Promise<unknown>
    const leaked = await new AsyncFunction('require', envTries)()
    delete process.env.PLINTH_SANDBOX_CANARY
    expect(JSON.stringify(leaked)).toContain('canary-secret')
  })

  it('prototype tricks stay in the sandbox: the host prototypes are untouched and the next run starts clean', async () => {
    const code = `
      Object.prototype.polluted = 'yes'
      Array.prototype.map = () => 'hijacked'
      ;({}).__proto__.toString = () => 'owned'
      JSON.parse = () => ({ hijacked: true })
      return [({}).polluted, [1].map((x) => x)]`
    expect(await run(code)).toMatchObject({ ok: true, value: ['yes', 'hijacked'] })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect([1].map((x) => x * 2)).toEqual([2])
    expect(await run('return [({}).polluted === undefined, [1].map((x) => x + 1)]')).toMatchObject({
      ok: true,
      value: [true, [2]],
    })
  })
  it('a returned object cannot smuggle a getter or a prototype to the host (it comes out as JSON)', async () => {
    const code = `
      const o = { get x() { return 'getter' }, ['__proto__']: { polluted: 1 } }
      Object.defineProperty(o, 'toJSON', { value: () => ({ safe: true }) })
      return o`
    const result = await run(code)
    expect(result).toMatchObject({ ok: true, value: { safe: true } })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
  it('an infinite loop is stopped by the CPU bound, and cannot be caught', async () => {
    expect(await run('while (true) {}', { cpuMs: 200 })).toMatchObject({ ok: false, kind: 'cpu' })
    expect(await run('for (;;) { try { while (true) {} } catch (e) {} }', { cpuMs: 200 })).toMatchObject({
      ok: false,
      kind: 'cpu',
    })
    expect(await run('await null; while (true) {}', { cpuMs: 200 })).toMatchObject({ ok: false, kind: 'cpu' })
  })
  it('a 1 GB allocation fails with the memory bound', async () => {
    expect(await run('return new ArrayBuffer(1024 * 1024 * 1024).byteLength')).toMatchObject({
      ok: false,
      kind: 'memory',
    })
    expect(await run('return "x".repeat(2 ** 28).length')).toMatchObject({ ok: false, kind: 'memory' })
    expect(
      await run('const a = []; while (true) a.push({ i: a.length, s: "abc" + a.length })', { cpuMs: 20_000 }),
    ).toMatchObject({ ok: false, kind: 'memory' })
  })
  it('many small allocations end at the memory bound: the WebAssembly memory never grows past the limit plus its headroom', async () => {
    // QuickJS's own count misses these (8 bytes per block in this build); the memory's maximum does not.
    const result = await run("const a = []; for (;;) a.push('x'.repeat(1e6))", { cpuMs: 20_000 })
    expect(result).toMatchObject({ ok: false, kind: 'memory' })
    expect(result.memoryBytes).toBeLessThanOrEqual(linearMemoryBytes(base.memoryBytes))
  })
  it("a thrown object's getter runs on the script's CPU time: it cannot hang the host", async () => {
    expect(await run('throw { get message() { for (;;) {} } }', { cpuMs: 200 })).toMatchObject({
      ok: false,
      kind: 'cpu',
    })
  })
  it('what the host copies out is bounded inside, whatever the script replaced: a console line, a fetch request', async () => {
    const seen: unknown[] = []
    const fetch = async (request: unknown) => (
      seen.push(request), { url: '', status: 200, statusText: 'OK', headers: {}, body: '' }
    )
    const code = `
      String.prototype.slice = () => 'y'.repeat(3e6)
      JSON.stringify = () => 'z'.repeat(3e6)
      console.log('x'.repeat(3e6))
      try { await fetch('https://api.test/', { method: 'POST', body: 'b'.repeat(2 * 1024 * 1024) }) } catch (e) { return [e.name, e.code] }`
    const result = await run(code, { fetch })
    expect(result).toMatchObject({ ok: true, value: ['FetchError', 'too_large'] })
    expect(seen).toEqual([])
    expect(result.logs).toEqual([{ level: 'info', message: 'x'.repeat(2000) }])
  })
  it('deep recursion is a stack overflow, not a crash', async () => {
    expect(await run('function f(n) { return f(n + 1) + 1 } return f(0)')).toMatchObject({ ok: false, kind: 'stack' })
  })
  it('fetch without a host fetch is refused inside the script (catchable, with a code)', async () => {
    expect(await run('try { await fetch("http://127.0.0.1/") } catch (e) { return [e.name, e.code] }')).toMatchObject({
      ok: true,
      value: ['FetchError', 'fetch_not_allowed'],
    })
  })
  it('fetch passes strings only: the host answer, or its refusal code', async () => {
    const seen: unknown[] = []
    const fetch = async (request: unknown) => {
      seen.push(request)
      if ((request as { url: string }).url.includes('refuse')) throw new SandboxFetchError('domain_not_allowed', 'no')
      return {
        url: 'https://api.test/x',
        status: 201,
        statusText: 'Created',
        headers: { 'content-type': 'application/json' },
        body: '{"ok":1}',
      }
    }
    const code = `
      const r = await fetch('https://api.test/x', { method: 'post', headers: { a: 1 }, body: { b: 2 } })
      let refused = null
      try { await fetch('https://refuse.test/') } catch (e) { refused = e.code }
      return { status: r.status, ok: r.ok, body: await r.json(), type: r.headers['content-type'], refused }`
    expect(await run(code, { fetch })).toMatchObject({
      ok: true,
      value: { status: 201, ok: true, body: { ok: 1 }, type: 'application/json', refused: 'domain_not_allowed' },
    })
    expect(seen[0]).toEqual({ url: 'https://api.test/x', method: 'POST', headers: { a: '1' }, body: '{"b":2}' })
  })
  it('a host fetch that never answers ends at the wall bound; an abort of the signal ends it too', async () => {
    const never = () => new Promise<never>(() => {})
    expect(await run('await fetch("https://slow.test/")', { fetch: never, timeoutMs: 200 })).toMatchObject({
      ok: false,
      kind: 'timeout',
    })
    const controller = new AbortController()
    const running = run('await fetch("https://slow.test/")', {
      fetch: async () => (controller.abort(), never()),
      signal: controller.signal,
    })
    expect(await running).toMatchObject({ ok: false, kind: 'aborted' })
  })
})
