import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { SandboxFetchError, type SandboxFailureKind, type SandboxFetchRequest, type SandboxFetchResponse, type SandboxOptions, type SandboxResult } from './quickjs.js'

/** The options that cross to the worker (no functions), with the shared abort flag. */
export type WorkerRun = {
  readonly options: Omit<SandboxOptions, 'fetch' | 'signal' | 'interrupted'> & { readonly canFetch: boolean }
  readonly flag: Int32Array
}
export type FromWorker = { type: 'ready' } | { type: 'fetch'; id: number; request: SandboxFetchRequest } | { type: 'result'; result: SandboxResult }
export type ToWorker =
  | ({ type: 'run' } & WorkerRun)
  | { type: 'abort' }
  | ({ type: 'fetched'; id: number } & ({ ok: true; response: SandboxFetchResponse } | { ok: false; code: string; message: string }))

/** Past the script's own bounds, how long a run is given before its worker is terminated. */
const graceMs = 2000
/** How long a new worker may take to start. */
const bootMs = 60_000
/** Workers kept for the next runs (a run that had to be terminated takes its worker with it). */
const maxIdle = 2

// The built server has worker.js beside this file. Under the TypeScript sources (tests, tsx), the worker
// registers tsx's loader first: a worker does not inherit the parent's loader hooks.
const fromSources = import.meta.url.endsWith('.ts')
function spawn(): Worker {
  let worker: Worker
  if (fromSources) {
    const tsx = new URL('dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href
    const entry = new URL('./worker.ts', import.meta.url).href
    worker = new Worker(`import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}) })`, { eval: true, ...workerOptions })
  } else {
    worker = new Worker(new URL('./worker.js', import.meta.url), workerOptions)
  }
  // Whatever the worker prints (an assertion of the interpreter) is dropped, not mixed into the server's log.
  worker.stdout.resume()
  worker.stderr.resume()
  return worker
}
const workerOptions = {
  // No copy of the server's environment: nothing to find even past the interpreter.
  env: {}, stdout: true, stderr: true,
  // The V8 heap of the worker's own code; the script's heap is the WebAssembly memory, capped by memoryBytes.
  resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
}

/** Scripts running at once (each holds a thread and a core while it computes); the others wait their turn. */
const maxBusy = Math.max(2, availableParallelism())
let busy = 0
const queue: (() => void)[] = []

/** Waits for a turn; false when `signal` aborts first. */
function turn(signal: AbortSignal | undefined): Promise<boolean> {
  if (busy < maxBusy) {
    busy++
    return Promise.resolve(true)
  }
  if (signal?.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const go = () => {
      signal?.removeEventListener('abort', cancel)
      busy++
      resolve(true)
    }
    const cancel = () => {
      queue.splice(queue.indexOf(go), 1)
      resolve(false)
    }
    queue.push(go)
    signal?.addEventListener('abort', cancel, { once: true })
  })
}

function endTurn(): void {
  busy--
  queue.shift()?.()
}

interface Ready {
  readonly worker: Worker
  readonly ready: Promise<boolean>
}
const idle: Ready[] = []

function take(): Ready {
  const found = idle.pop()
  if (found) {
    found.worker.ref()
    return found
  }
  const worker = spawn()
  const ready = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), bootMs)
    worker.once('message', () => (clearTimeout(timer), resolve(true)))
    worker.once('error', () => (clearTimeout(timer), resolve(false)))
    worker.once('exit', () => (clearTimeout(timer), resolve(false)))
  })
  return { worker, ready }
}

function release(entry: Ready, reusable: boolean): void {
  entry.worker.removeAllListeners('message').removeAllListeners('error').removeAllListeners('exit')
  if (reusable && idle.length < maxIdle) {
    entry.worker.on('error', () => drop(entry)).on('exit', () => drop(entry))
    entry.worker.unref()
    idle.push(entry)
  } else {
    void entry.worker.terminate()
  }
}

function drop(entry: Ready): void {
  const at = idle.indexOf(entry)
  if (at >= 0) idle.splice(at, 1)
}

/**
 * runInSandbox in a worker thread: the server's event loop never waits on a script, however long a
 * builtin call runs between two checks of the interrupt handler, and a run still going `timeoutMs` + 2 s
 * after it started is ended by terminating its worker (as `cpu`, or `timeout` while a fetch was out).
 * Workers have an empty environment and are reused (each run gets a fresh WebAssembly instance); at most
 * max(2, cores) run at once, the others wait (an abort while waiting ends the run as aborted). `fetch`
 * runs here, in the parent, so lib/outbound stays the only way out. Never throws for anything the script does.
 */
export async function runIsolated(options: SandboxOptions): Promise<SandboxResult> {
  const { fetch, signal, code, input, context, cpuMs, timeoutMs, memoryBytes, maxOutputBytes, maxLogLines } = options
  const failed = (kind: SandboxFailureKind, message: string): SandboxResult => ({ ok: false, kind, name: 'InternalError', message, logs: [], cpuMs: 0 })
  if (!(await turn(signal))) return failed('aborted', 'aborted while waiting for a turn')
  const entry = take()
  if (!(await entry.ready)) {
    release(entry, false)
    endTurn()
    return failed('thrown', 'The script worker did not start')
  }
  const { worker } = entry
  const flag = new Int32Array(new SharedArrayBuffer(4))
  const fetches = new AbortController()
  let inFlight = 0
  return new Promise<SandboxResult>((resolve) => {
    let done = false
    const finish = (result: SandboxResult, reusable: boolean) => {
      if (done) return
      done = true
      clearTimeout(killer)
      signal?.removeEventListener('abort', onAbort)
      fetches.abort()
      release(entry, reusable)
      endTurn()
      resolve(result)
    }
    const killer = setTimeout(() => finish(failed(inFlight > 0 ? 'timeout' : 'cpu', 'terminated'), false), timeoutMs + graceMs)
    const onAbort = () => {
      Atomics.store(flag, 0, 1)
      worker.postMessage({ type: 'abort' } satisfies ToWorker)
    }
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'result') return finish(message.result, true)
      if (message.type !== 'fetch') return
      inFlight++
      const answer = (reply: ToWorker) => {
        inFlight--
        if (!done) worker.postMessage(reply)
      }
      fetch!(message.request, fetches.signal).then(
        (response) => answer({ type: 'fetched', id: message.id, ok: true, response }),
        (err: unknown) => {
          const refusal = err instanceof SandboxFetchError ? err : new SandboxFetchError('fetch_failed', 'The request failed')
          answer({ type: 'fetched', id: message.id, ok: false, code: refusal.code, message: refusal.message })
        },
      )
    })
    worker.on('error', (err: Error & { code?: string }) => finish(failed(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'thrown', 'The script worker failed'), false))
    worker.on('exit', () => finish(failed('thrown', 'The script worker ended without a result'), false))
    const run: ToWorker = { type: 'run', options: { code, input, context, cpuMs, timeoutMs, memoryBytes, maxOutputBytes, maxLogLines, canFetch: fetch !== undefined }, flag }
    worker.postMessage(run)
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
}
