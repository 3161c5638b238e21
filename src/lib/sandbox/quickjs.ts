import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { performance } from 'node:perf_hooks'
import { InterpreterMeter } from './cpu-time.js'
import { newSandboxInstance, type SandboxInstance } from './memory.js'
import { prelude } from './prelude.js'
import {
  epochMs,
  SandboxFetchError,
  type SandboxFailureKind,
  type SandboxFetchRequest,
  type SandboxLogLine,
  type SandboxOptions,
  type SandboxResult,
} from './types.js'

export {
  SandboxFetchError,
  type SandboxFailureKind,
  type SandboxFetchRequest,
  type SandboxFetchResponse,
  type SandboxLogLine,
  type SandboxOptions,
  type SandboxResult,
} from './types.js'

/** The interpreter's own stack, below the WebAssembly stack, so deep recursion is a RangeError rather than a trap. */
const maxStackBytes = 256 * 1024
const defaultMaxOutput = 1024 * 1024
/** Longest fetch request a script may make, as JSON (URL, headers, body): what the host copies out of the sandbox. */
const maxRequestChars = 1024 * 1024
const maxLineChars = 2000

/**
 * Runs untrusted JavaScript in QuickJS compiled to WebAssembly: a fresh WebAssembly instance per run over
 * its own memory, capped at `memoryBytes` plus a fixed headroom (memory.ts; dropped with the run), its
 * time in the interpreter capped at `cpuMs` through the interrupt handler (an infinite loop stops there,
 * and the script cannot catch that; a long builtin call is stopped by runIsolated's watchdog), the whole
 * run at `timeoutMs`. Never throws for anything the script does: every failure is a `{ ok: false, kind }` result.
 */
export async function runInSandbox(options: SandboxOptions): Promise<SandboxResult> {
  // The whole run is the script's time (setting up its instance included), but for its waits on the host.
  const meter = new InterpreterMeter(options.cpuClock ?? epochMs, options.onSlice)
  meter.enter()
  try {
    const run = new SandboxRun(await newSandboxInstance(options.memoryBytes), meter, options)
    try {
      return await run.execute()
    } catch (err) {
      // The host side failed (a bound hit while installing the prelude, say): still a result, never a throw.
      return run.crashed(err)
    } finally {
      run.dispose()
    }
  } finally {
    meter.leave()
  }
}

class SandboxRun {
  private readonly runtime: QuickJSRuntime
  private readonly context: QuickJSContext
  /** The prelude's `describe` and `output` (prelude.ts), set once it is installed. */
  private helpers: { describe: QuickJSHandle; output: QuickJSHandle } | null = null
  private readonly logs: SandboxLogLine[] = []
  private readonly pending = new Set<Promise<void>>()
  private readonly deferreds = new Set<QuickJSDeferredPromise>()
  /** Aborts the host's fetches when the script ends or is stopped. */
  private readonly hostAbort = new AbortController()
  private readonly startedAt = performance.now()
  /** Set by the interrupt handler or the wall clock: why the script was stopped. */
  private stopped: SandboxFailureKind | null = null

  constructor(
    private readonly instance: SandboxInstance,
    /** The run's CPU time (cpu-time.ts): inside from the start, outside while waiting on the host. */
    private readonly meter: InterpreterMeter,
    private readonly options: SandboxOptions,
  ) {
    const runtime = (this.runtime = instance.module.newRuntime())
    // QuickJS's own limit still refuses one allocation over the limit at once (a 1 GB ArrayBuffer); the memory's maximum bounds the sum.
    runtime.setMemoryLimit(options.memoryBytes)
    runtime.setMaxStackSize(maxStackBytes)
    runtime.setInterruptHandler(() => this.shouldStop())
    this.context = runtime.newContext()
  }

  private shouldStop(): boolean {
    if (this.stopped) return true
    // Inside the interpreter the CPU bound applies (cpuMs ≤ timeoutMs, so a busy script always meets it first); the wall bound while it waits for the host.
    if (this.meter.inside && this.meter.over(this.options.cpuMs)) this.stopped = 'cpu'
    else if (this.options.signal?.aborted || this.options.interrupted?.()) this.stopped = 'aborted'
    return this.stopped !== null
  }

  async execute(): Promise<SandboxResult> {
    const vm = this.context
    this.install()
    const compiled = vm.evalCode(`(async function (input, context) {\n${this.options.code}\n})`, 'script.js')
    if (compiled.error) return this.failure(compiled.error, 'syntax')
    const fn = compiled.value
    const input = this.jsonIn(this.options.input)
    const context = this.jsonIn(this.options.context)
    const call = vm.callFunction(fn, vm.undefined, input, context)
    input.dispose()
    context.dispose()
    fn.dispose()
    if (call.error) return this.failure(call.error, 'thrown')
    const promise = call.value
    try {
      const settled = await this.settle(promise)
      if (settled) return settled
      const state = vm.getPromiseState(promise)
      if (state.type === 'rejected') return this.failure(state.error, 'thrown')
      if (state.type !== 'fulfilled')
        return this.fail('stalled', 'Error', 'The script awaited something that never settles')
      return this.result(state.value)
    } finally {
      promise.dispose()
    }
  }

  /** Runs the promise jobs, waiting for the host's fetches in between, until the script's promise settles or a bound is hit. */
  private async settle(promise: QuickJSHandle): Promise<SandboxResult | null> {
    for (;;) {
      const jobs = this.runtime.executePendingJobs()
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
    // Waiting is not the script's time: the meter is outside until the host answers.
    this.meter.leave()
    try {
      const outcome = await Promise.race([stop, Promise.race(this.pending).then(() => null)])
      if (outcome) {
        this.stopped = outcome
        return this.fail(outcome, 'InternalError', 'interrupted')
      }
      return null
    } finally {
      this.meter.enter()
      clearTimeout(timer)
      if (onAbort) this.options.signal?.removeEventListener('abort', onAbort)
    }
  }

  private install(): void {
    const vm = this.context
    // Both receive strings the prelude has already bounded; anything else is ignored rather than copied.
    const hostLog = vm.newFunction('hostLog', (level, message) => {
      const maxLines = this.options.maxLogLines ?? 100
      if (this.logs.length < maxLines && vm.typeof(message) === 'string') {
        const name = vm.typeof(level) === 'string' ? vm.getString(level) : 'info'
        this.logs.push({
          level: name === 'warn' || name === 'error' || name === 'debug' ? name : 'info',
          message: vm.getString(message).slice(0, maxLineChars),
        })
      }
    })
    const hostFetch = vm.newFunction('hostFetch', (requestHandle) =>
      this.startFetch(vm.typeof(requestHandle) === 'string' ? vm.getString(requestHandle) : ''),
    )
    const installer = vm.unwrapResult(vm.evalCode(prelude, 'prelude.js'))
    const maxLine = vm.newNumber(maxLineChars)
    const maxRequest = vm.newNumber(maxRequestChars)
    try {
      const helpers = vm.unwrapResult(vm.callFunction(installer, vm.undefined, hostFetch, hostLog, maxLine, maxRequest))
      this.helpers = { describe: vm.getProp(helpers, 'describe'), output: vm.getProp(helpers, 'output') }
      helpers.dispose()
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
        answer =
          err instanceof SandboxFetchError
            ? { ok: false, code: err.code, message: err.message }
            : { ok: false, code: 'fetch_failed', message: 'The request failed' }
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
      const max = this.options.maxOutputBytes ?? defaultMaxOutput
      const maxHandle = vm.newNumber(max)
      // The JSON is made inside; a text longer than `max` characters is only measured there, never copied out.
      const json = vm.callFunction(this.helpers!.output, vm.undefined, value, maxHandle)
      maxHandle.dispose()
      if (json.error) return this.failure(json.error, 'output')
      const text = vm.typeof(json.value) === 'string' ? vm.getString(json.value) : null
      json.value.dispose()
      if (text === null || Buffer.byteLength(text) > max)
        return this.fail('output', 'RangeError', `The result is over ${max} bytes as JSON`)
      return {
        ok: true,
        value: JSON.parse(text) as unknown,
        logs: this.logs,
        cpuMs: Math.round(this.meter.usedMs()),
        memoryBytes: this.instance.memory.buffer.byteLength,
      }
    } finally {
      value.dispose()
    }
  }

  /** A failure from an exception handle: a bound that stopped the script wins over the exception it raised. */
  private failure(errorHandle: QuickJSHandle, fallback: SandboxFailureKind): SandboxResult {
    const vm = this.context
    let name = 'Error'
    let message = this.instance.exhausted() ? 'out of memory' : 'The script failed'
    try {
      // Read inside the interpreter (a getter counts as the script's CPU time), bounded there (prelude.ts).
      const described = this.helpers && vm.callFunction(this.helpers!.describe, vm.undefined, errorHandle)
      if (described && !described.error && vm.typeof(described.value) === 'string') {
        const [n, m] = JSON.parse(vm.getString(described.value)) as [string, string]
        name = n
        message = m
      }
      if (described) (described.error ?? described.value).dispose()
    } catch {
      // Nothing could be read (out of memory while describing): the generic message stands.
    } finally {
      errorHandle.dispose()
    }
    let kind: SandboxFailureKind = this.stopped ?? fallback
    // Once its memory was at the maximum, a script's failure is that bound (QuickJS throws null when it cannot even make the error).
    if (!this.stopped && kind === 'thrown' && this.instance.exhausted() && !/out of memory/i.test(message))
      return this.fail('memory', 'InternalError', 'out of memory')
    if (!this.stopped && /out of memory/i.test(message)) kind = 'memory'
    else if (!this.stopped && /stack overflow|call stack/i.test(message)) kind = 'stack'
    return this.fail(kind, name, message.slice(0, 2000))
  }

  crashed(err: unknown): SandboxResult {
    if (this.shouldStop()) return this.fail(this.stopped!, 'InternalError', 'interrupted')
    // The host's side of the instance failed to allocate (a string copied in) once the memory was at its maximum.
    if (this.instance.exhausted()) return this.fail('memory', 'InternalError', 'out of memory')
    return this.fail('thrown', 'InternalError', err instanceof Error ? err.message.slice(0, 500) : 'The sandbox failed')
  }

  private fail(kind: SandboxFailureKind, name: string, message: string): SandboxResult {
    return {
      ok: false,
      kind,
      name,
      message,
      logs: this.logs,
      cpuMs: Math.round(this.meter.usedMs()),
      memoryBytes: this.instance.memory.buffer.byteLength,
    }
  }

  dispose(): void {
    this.hostAbort.abort()
    for (const deferred of this.deferreds) if (deferred.alive) deferred.dispose()
    this.deferreds.clear()
    // The WebAssembly instance is dropped with the run either way; a leak QuickJS asserts on must not surface.
    try {
      if (this.helpers) for (const handle of Object.values(this.helpers)) handle.dispose()
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
  const { url, method, headers, body } = (raw ?? {}) as {
    url?: unknown
    method?: unknown
    headers?: unknown
    body?: unknown
  }
  if (typeof url !== 'string') throw new SandboxFetchError('bad_url', 'fetch needs a URL')
  const headerMap: Record<string, string> = {}
  if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) headerMap[name] = String(value)
  }
  return {
    url,
    method: typeof method === 'string' ? method.toUpperCase() : 'GET',
    headers: headerMap,
    body: typeof body === 'string' ? body : null,
  }
}
