import releaseSync from '@jitl/quickjs-wasmfile-release-sync'
import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSSyncVariant, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten-core'
import { performance } from 'node:perf_hooks'

/** What a sandboxed script's `fetch(url, init)` hands the host: plain strings, nothing else. */
export interface SandboxFetchRequest {
  readonly url: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string | null
}

/** What the host answers a sandboxed `fetch` with (the body as text). */
export interface SandboxFetchResponse {
  readonly url: string
  readonly status: number
  readonly statusText: string
  readonly headers: Record<string, string>
  readonly body: string
}

/** A refused or failed `fetch`: the script sees an Error with this `code` (it may catch it). */
export class SandboxFetchError extends Error {
  override name = 'FetchError'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export interface SandboxOptions {
  /** The body of an async function of (input, context): `return` gives the result. */
  readonly code: string
  /** JSON values given to the script as its `input` and `context` arguments (copied in as JSON). */
  readonly input: unknown
  readonly context: unknown
  /** Time spent inside the interpreter (the script's CPU time), awaits excluded. */
  readonly cpuMs: number
  /** The whole run, awaits (fetch) included; checked while the script waits for the host (inside the interpreter, cpuMs applies). */
  readonly timeoutMs: number
  /** The script's heap. */
  readonly memoryBytes: number
  /** Aborts the script (the run's timeout, a cancel). */
  readonly signal?: AbortSignal
  /** Asked while the script runs in the interpreter, where no event can arrive: true stops it as aborted (a worker's shared flag). */
  readonly interrupted?: () => boolean
  /** The host side of `fetch`; absent: every fetch is refused. The signal given aborts when the script ends. */
  readonly fetch?: (request: SandboxFetchRequest, signal: AbortSignal) => Promise<SandboxFetchResponse>
  /** Longest JSON of the result (default 1 MiB). */
  readonly maxOutputBytes?: number
  /** Console lines kept (default 100) and their length (default 2,000). */
  readonly maxLogLines?: number
}

export interface SandboxLogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error'
  readonly message: string
}

/** Why a script failed: its own exception, or a bound the host put on it. */
export type SandboxFailureKind = 'thrown' | 'syntax' | 'cpu' | 'timeout' | 'memory' | 'stack' | 'output' | 'aborted' | 'stalled'

export type SandboxResult =
  | { readonly ok: true; readonly value: unknown; readonly logs: readonly SandboxLogLine[]; readonly cpuMs: number }
  | {
      readonly ok: false
      readonly kind: SandboxFailureKind
      readonly name: string
      readonly message: string
      readonly logs: readonly SandboxLogLine[]
      readonly cpuMs: number
    }

// The package's types describe its CommonJS build (default under `.default`); its ES module exports the variant itself.
const variant = ((releaseSync as { default?: QuickJSSyncVariant }).default ?? releaseSync) as QuickJSSyncVariant

/** The interpreter's own stack, below the WebAssembly stack, so deep recursion is a RangeError rather than a trap. */
const maxStackBytes = 256 * 1024
const defaultMaxOutput = 1024 * 1024

/**
 * Installed before the script: `console` and `fetch` built over the two host functions, which only ever
 * pass strings. Nothing of the host's is reachable from the script: no process, require, file system,
 * timers or host objects; `Function` and `eval` exist but compile inside the sandbox.
 */
const prelude = `(function (hostFetch, hostLog) {
  'use strict';
  const text = (v) => { if (typeof v === 'string') return v; try { const j = JSON.stringify(v); return j === undefined ? String(v) : j } catch { return String(v) } };
  const line = (level) => (...args) => { hostLog(level, args.map(text).join(' ')) };
  globalThis.console = Object.freeze({ log: line('info'), info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') });
  globalThis.fetch = async function fetch(url, init) {
    init = init || {};
    const request = JSON.stringify({ url: String(url), method: String(init.method || 'GET'), headers: init.headers || {}, body: init.body === undefined || init.body === null ? null : (typeof init.body === 'string' ? init.body : JSON.stringify(init.body)) });
    const r = JSON.parse(await hostFetch(request));
    return Object.freeze({ url: r.url, status: r.status, statusText: r.statusText, ok: r.status >= 200 && r.status < 300, headers: Object.freeze(r.headers),
      text: async () => r.body, json: async () => JSON.parse(r.body) });
  };
})`

/**
 * Runs untrusted JavaScript in QuickJS compiled to WebAssembly: a fresh WebAssembly instance per run (its
 * memory is the script's and is dropped with it), the interpreter's heap capped at `memoryBytes`, its time
 * in the interpreter capped at `cpuMs` through the interrupt handler (an infinite loop stops there, and
 * the script cannot catch that), the whole run at `timeoutMs`. Never throws for anything the script
 * does: every failure is a `{ ok: false, kind }` result.
 */
export async function runInSandbox(options: SandboxOptions): Promise<SandboxResult> {
  const module = await newQuickJSWASMModuleFromVariant(variant)
  const runtime = module.newRuntime()
  const run = new SandboxRun(runtime, options)
  try {
    return await run.execute()
  } catch (err) {
    // The host side failed (a bound hit while installing the prelude, say): still a result, never a throw.
    return run.crashed(err)
  } finally {
    run.dispose()
  }
}

class SandboxRun {
  private readonly context: QuickJSContext
  private readonly logs: SandboxLogLine[] = []
  private readonly pending = new Set<Promise<void>>()
  private readonly deferreds = new Set<QuickJSDeferredPromise>()
  /** Aborts the host's fetches when the script ends or is stopped. */
  private readonly hostAbort = new AbortController()
  private cpuUsed = 0
  private sliceStart: number | null = null
  private readonly startedAt = performance.now()
  /** Set by the interrupt handler or the wall clock: why the script was stopped. */
  private stopped: SandboxFailureKind | null = null

  constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly options: SandboxOptions,
  ) {
    runtime.setMemoryLimit(options.memoryBytes)
    runtime.setMaxStackSize(maxStackBytes)
    runtime.setInterruptHandler(() => this.shouldStop())
    this.context = runtime.newContext()
  }

  private shouldStop(): boolean {
    if (this.stopped) return true
    const now = performance.now()
    // Inside the interpreter the CPU bound applies (cpuMs ≤ timeoutMs, so a busy script always meets it first); the wall bound while it waits for the host.
    if (this.sliceStart !== null && this.cpuUsed + (now - this.sliceStart) > this.options.cpuMs) this.stopped = 'cpu'
    else if (this.options.signal?.aborted || this.options.interrupted?.()) this.stopped = 'aborted'
    return this.stopped !== null
  }

  /** Runs `fn` inside the interpreter, counting its time as the script's CPU time. */
  private inVm<T>(fn: () => T): T {
    this.sliceStart = performance.now()
    try {
      return fn()
    } finally {
      this.cpuUsed += performance.now() - this.sliceStart
      this.sliceStart = null
    }
  }

  async execute(): Promise<SandboxResult> {
    const vm = this.context
    this.install()
    const compiled = this.inVm(() => vm.evalCode(`(async function (input, context) {\n${this.options.code}\n})`, 'script.js'))
    if (compiled.error) return this.failure(compiled.error, 'syntax')
    const fn = compiled.value
    const call = this.inVm(() => {
      const input = this.jsonIn(this.options.input)
      const context = this.jsonIn(this.options.context)
      try {
        return vm.callFunction(fn, vm.undefined, input, context)
      } finally {
        input.dispose()
        context.dispose()
        fn.dispose()
      }
    })
    if (call.error) return this.failure(call.error, 'thrown')
    const promise = call.value
    try {
      const settled = await this.settle(promise)
      if (settled) return settled
      const state = vm.getPromiseState(promise)
      if (state.type === 'rejected') return this.failure(state.error, 'thrown')
      if (state.type !== 'fulfilled') return this.fail('stalled', 'Error', 'The script awaited something that never settles')
      return this.result(state.value)
    } finally {
      promise.dispose()
    }
  }

  /** Runs the promise jobs, waiting for the host's fetches in between, until the script's promise settles or a bound is hit. */
  private async settle(promise: QuickJSHandle): Promise<SandboxResult | null> {
    for (;;) {
      const jobs = this.inVm(() => this.runtime.executePendingJobs())
      if (jobs.error) return this.failure(jobs.error, 'thrown')
      if (this.stopped) return this.fail(this.stopped, 'InternalError', 'interrupted')
      if (this.isSettled(promise)) return null
      if (this.runtime.hasPendingJob()) continue
      if (this.pending.size === 0) return null
      const wait = await this.waitForHost()
      if (wait) return wait
    }
  }

  private isSettled(promise: QuickJSHandle): boolean {
    const state = this.context.getPromiseState(promise)
    if (state.type === 'fulfilled') state.value.dispose()
    else if (state.type === 'rejected') state.error.dispose()
    return state.type !== 'pending'
  }

  /** Waits for a fetch to finish, the wall clock to run out or the signal to abort. */
  private async waitForHost(): Promise<SandboxResult | null> {
    const remaining = this.options.timeoutMs - (performance.now() - this.startedAt)
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const stop = new Promise<SandboxFailureKind>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, remaining))
      onAbort = () => resolve('aborted')
      if (this.options.signal?.aborted) resolve('aborted')
      this.options.signal?.addEventListener('abort', onAbort, { once: true })
    })
    try {
      const outcome = await Promise.race([stop, Promise.race(this.pending).then(() => null)])
      if (outcome) {
        this.stopped = outcome
        return this.fail(outcome, 'InternalError', 'interrupted')
      }
      return null
    } finally {
      clearTimeout(timer)
      if (onAbort) this.options.signal?.removeEventListener('abort', onAbort)
    }
  }

  private install(): void {
    const vm = this.context
    const hostLog = vm.newFunction('hostLog', (level, message) => {
      const maxLines = this.options.maxLogLines ?? 100
      if (this.logs.length < maxLines) {
        const name = vm.getString(level)
        this.logs.push({ level: name === 'warn' || name === 'error' || name === 'debug' ? name : 'info', message: vm.getString(message).slice(0, 2000) })
      }
    })
    const hostFetch = vm.newFunction('hostFetch', (requestHandle) => this.startFetch(vm.getString(requestHandle)))
    const installer = this.inVm(() => vm.unwrapResult(vm.evalCode(prelude, 'prelude.js')))
    try {
      this.inVm(() => vm.unwrapResult(vm.callFunction(installer, vm.undefined, hostFetch, hostLog))).dispose()
    } finally {
      installer.dispose()
      hostFetch.dispose()
      hostLog.dispose()
    }
  }

  /** The host side of one fetch: a sandbox promise settled (with strings only) when the host's request ends. */
  private startFetch(requestJson: string): QuickJSHandle {
    const vm = this.context
    const deferred = vm.newPromise()
    this.deferreds.add(deferred)
    // The library takes (and frees) what a host function returns; the deferred keeps its own handle.
    const returned = deferred.handle.dup()
    const task = (async () => {
      let answer: { ok: true; json: string } | { ok: false; code: string; message: string }
      try {
        const fetch = this.options.fetch
        if (!fetch) throw new SandboxFetchError('fetch_not_allowed', 'This script may not fetch')
        const request = parseRequest(requestJson)
        const response = await fetch(request, this.hostAbort.signal)
        answer = { ok: true, json: JSON.stringify(response) }
      } catch (err) {
        answer = err instanceof SandboxFetchError ? { ok: false, code: err.code, message: err.message } : { ok: false, code: 'fetch_failed', message: 'The request failed' }
      }
      if (!deferred.alive) return
      if (answer.ok) {
        const value = vm.newString(answer.json)
        deferred.resolve(value)
        value.dispose()
      } else {
        const error = vm.newError({ name: 'FetchError', message: answer.message })
        const code = vm.newString(answer.code)
        vm.setProp(error, 'code', code)
        code.dispose()
        deferred.reject(error)
        error.dispose()
      }
      this.deferreds.delete(deferred)
      deferred.dispose()
    })()
    const tracked = task.finally(() => this.pending.delete(tracked))
    this.pending.add(tracked)
    return returned
  }

  /** A JSON value copied into the sandbox (parsed there, so nothing of the host's comes along). */
  private jsonIn(value: unknown): QuickJSHandle {
    const vm = this.context
    const json = vm.newString(JSON.stringify(value ?? null))
    const JSONObject = vm.getProp(vm.global, 'JSON')
    const parse = vm.getProp(JSONObject, 'parse')
    try {
      return vm.unwrapResult(vm.callFunction(parse, JSONObject, json))
    } finally {
      parse.dispose()
      JSONObject.dispose()
      json.dispose()
    }
  }

  /** The script's result as JSON text made inside the sandbox, parsed on the host (undefined becomes null). */
  private result(value: QuickJSHandle): SandboxResult {
    const vm = this.context
    try {
      const JSONObject = vm.getProp(vm.global, 'JSON')
      const stringify = vm.getProp(JSONObject, 'stringify')
      const json = this.inVm(() => vm.callFunction(stringify, JSONObject, value))
      stringify.dispose()
      JSONObject.dispose()
      if (json.error) return this.failure(json.error, 'output')
      const text = vm.typeof(json.value) === 'string' ? vm.getString(json.value) : 'null'
      json.value.dispose()
      const max = this.options.maxOutputBytes ?? defaultMaxOutput
      if (Buffer.byteLength(text) > max) return this.fail('output', 'RangeError', `The result is over ${max} bytes as JSON`)
      return { ok: true, value: JSON.parse(text) as unknown, logs: this.logs, cpuMs: Math.round(this.cpuUsed) }
    } finally {
      value.dispose()
    }
  }

  /** A failure from an exception handle: a bound that stopped the script wins over the exception it raised. */
  private failure(errorHandle: QuickJSHandle, fallback: SandboxFailureKind): SandboxResult {
    const vm = this.context
    let name = 'Error'
    let message = 'The script failed'
    try {
      const dumped = vm.dump(errorHandle) as unknown
      if (dumped && typeof dumped === 'object') {
        const { name: n, message: m } = dumped as { name?: unknown; message?: unknown }
        if (typeof n === 'string') name = n
        if (typeof m === 'string') message = m
      } else {
        message = String(dumped)
      }
    } catch {
      // A value that cannot be dumped (out of memory while dumping): the generic message stands.
    } finally {
      errorHandle.dispose()
    }
    let kind: SandboxFailureKind = this.stopped ?? fallback
    if (!this.stopped && /out of memory/i.test(message)) kind = 'memory'
    else if (!this.stopped && /stack overflow|call stack/i.test(message)) kind = 'stack'
    return this.fail(kind, name, message.slice(0, 2000))
  }

  crashed(err: unknown): SandboxResult {
    if (this.shouldStop()) return this.fail(this.stopped!, 'InternalError', 'interrupted')
    return this.fail('thrown', 'InternalError', err instanceof Error ? err.message.slice(0, 500) : 'The sandbox failed')
  }

  private fail(kind: SandboxFailureKind, name: string, message: string): SandboxResult {
    return { ok: false, kind, name, message, logs: this.logs, cpuMs: Math.round(this.cpuUsed) }
  }

  dispose(): void {
    this.hostAbort.abort()
    for (const deferred of this.deferreds) if (deferred.alive) deferred.dispose()
    this.deferreds.clear()
    // The WebAssembly instance is dropped with the run either way; a leak QuickJS asserts on must not surface.
    try {
      this.context.dispose()
      this.runtime.dispose()
    } catch {
      // The instance is garbage once unreferenced.
    }
  }
}

function parseRequest(json: string): SandboxFetchRequest {
  let raw: unknown
  try {
    raw = JSON.parse(json)
  } catch {
    throw new SandboxFetchError('bad_request', 'The request could not be read')
  }
  const { url, method, headers, body } = (raw ?? {}) as { url?: unknown; method?: unknown; headers?: unknown; body?: unknown }
  if (typeof url !== 'string') throw new SandboxFetchError('bad_url', 'fetch needs a URL')
  const headerMap: Record<string, string> = {}
  if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) headerMap[name] = String(value)
  }
  return { url, method: typeof method === 'string' ? method.toUpperCase() : 'GET', headers: headerMap, body: typeof body === 'string' ? body : null }
}
