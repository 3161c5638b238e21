import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { createAdmission, machineAdmissionLimits } from './admission.js'
import { threadClock, type Clock } from './cpu-time.js'
import { compiledQuickJS, linearMemoryBytes, minimumMemoryBytes } from './memory.js'
import {
  SandboxFetchError,
  type SandboxFailureKind,
  type SandboxFetchRequest,
  type SandboxFetchResponse,
  type SandboxOptions,
  type SandboxResult,
} from './types.js'
import { newRunShare, watchCpu } from './watchdog.js'

/** The options that cross to the worker (no functions), with the buffer shared with it (watchdog.ts). */
export type WorkerRun = {
  readonly options: Omit<SandboxOptions, 'fetch' | 'signal' | 'interrupted' | 'onSlice'> & {
    readonly canFetch: boolean
  }
  readonly share: SharedArrayBuffer
}
export type FromWorker =
  | { type: 'ready'; tid: number | null }
  | { type: 'fetch'; id: number; request: SandboxFetchRequest }
  | { type: 'result'; result: SandboxResult }
export type ToWorker =
  | ({ type: 'run' } & WorkerRun)
  | { type: 'abort' }
  | ({ type: 'fetched'; id: number } & (
      | { ok: true; response: SandboxFetchResponse }
      | { ok: false; code: string; message: string }
    ))

/** Past the script's own bounds, how long a run is given before its worker is terminated. */
const graceMs = 2000
/** How long a new worker may take to start. */
const bootMs = 60_000
/** Workers kept for the next runs (a run that had to be terminated, or whose memory grew, takes its worker with it). */
const maxIdle = 2
/**
 * What a running script may cost the process besides its WebAssembly memory (decision 047): a new worker
 * thread (a V8 isolate and Node's environment; the compiled QuickJS code is shared), measured at 33 MB in
 * the built server and about 60 MB under the TypeScript loader tests run with, and the copies of its
 * strings on the host side, bounded inside the sandbox to a few MiB (prelude.ts).
 */
export const perScriptOverheadBytes = 64 * 1024 * 1024
/** The most a script with this memory limit may add to the process: its WebAssembly memory at most, plus the overhead. */
export function reservationBytes(memoryBytes: number): number {
  return linearMemoryBytes(memoryBytes) + perScriptOverheadBytes
}
/** The largest memory limit a caller gives (lib/sandbox does not know the scripts' settings; 256 MB is theirs): the budget is at least its reservation. */
const largestLimitBytes = 256 * 1024 * 1024

// One admission and one set of idle workers per process: the memory and cores they share are the machine's.
const admission = createAdmission(machineAdmissionLimits(reservationBytes(largestLimitBytes)))

// The built server has worker.js beside this file. Under the TypeScript sources (tests, tsx), the worker
// registers tsx's loader first: a worker does not inherit the parent's loader hooks.
const fromSources = import.meta.url.endsWith('.ts')
function spawn(wasmModule: WebAssembly.Module): Worker {
  const options = { ...workerOptions, workerData: { wasmModule } }
  let worker: Worker
  if (fromSources) {
    const tsx = new URL(
      'dist/esm/api/index.mjs',
      pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json')),
    ).href
    const entry = new URL('./worker.ts', import.meta.url).href
    worker = new Worker(
      `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}) })`,
      { eval: true, ...options },
    )
  } else {
    worker = new Worker(new URL('./worker.js', import.meta.url), options)
  }
  // Whatever the worker prints (an assertion of the interpreter) is dropped, not mixed into the server's log.
  worker.stdout.resume()
  worker.stderr.resume()
  return worker
}
const workerOptions = {
  // No copy of the server's environment: nothing to find even past the interpreter.
  env: {},
  stdout: true,
  stderr: true,
  // The V8 heap of the worker's own code; the script's memory is the WebAssembly memory, capped by memoryBytes.
  resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
}

interface Ready {
  readonly worker: Worker
  /** Once started: the clock its runs' CPU time is read on (its thread's), or null when it did not start. */
  readonly ready: Promise<Clock | null>
}
const idle: Ready[] = []

async function take(): Promise<Ready> {
  const found = idle.pop()
  if (found) {
    found.worker.ref()
    return found
  }
  const worker = spawn(await compiledQuickJS())
  const ready = new Promise<Clock | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), bootMs)
    worker.once(
      'message',
      (message: FromWorker) => (
        clearTimeout(timer), resolve(threadClock(message.type === 'ready' ? message.tid : null))
      ),
    )
    worker.once('error', () => (clearTimeout(timer), resolve(null)))
    worker.once('exit', () => (clearTimeout(timer), resolve(null)))
  })
  return { worker, ready }
}

/** Keeps the worker for the next run, or terminates it; resolves once its thread (and so its memory) is gone. */
async function release(entry: Ready, reusable: boolean): Promise<void> {
  entry.worker.removeAllListeners('message').removeAllListeners('error').removeAllListeners('exit')
  if (reusable && idle.length < maxIdle) {
    entry.worker.on('error', () => drop(entry)).on('exit', () => drop(entry))
    entry.worker.unref()
    idle.push(entry)
  } else {
    await entry.worker.terminate().catch(() => undefined)
  }
}

function drop(entry: Ready): void {
  const at = idle.indexOf(entry)
  if (at >= 0) idle.splice(at, 1)
}

/**
 * runInSandbox in a worker thread: the server's event loop never waits on a script. A watchdog here reads
 * the script's time in the interpreter from the shared meter and terminates the worker once it passes
 * `cpuMs` (plus a 3% grace), even inside one long builtin call: the run ends as `cpu`. A run still going
 * `timeoutMs` + 2 s after it started is terminated too (`timeout` while a fetch was out). Workers have
 * an empty environment and are reused while their script's memory stayed at the initial 16 MiB (one that
 * grew is terminated, which returns its memory at once). Runs wait their turn (admission.ts): at most
 * max(2, cores) at once, and their reservations (limit + headroom + overhead) within the memory budget; an
 * abort while waiting ends the run as aborted. `fetch` runs here, in the parent, so lib/outbound stays
 * the only way out. Never throws for anything the script does.
 */
export async function runIsolated(options: SandboxOptions): Promise<SandboxResult> {
  const { fetch, signal, code, input, context, cpuMs, timeoutMs, memoryBytes, maxOutputBytes, maxLogLines } = options
  const failed = (kind: SandboxFailureKind, message: string, used = 0): SandboxResult => ({
    ok: false,
    kind,
    name: 'InternalError',
    message,
    logs: [],
    cpuMs: Math.round(used),
    memoryBytes: 0,
  })
  const reserved = reservationBytes(memoryBytes)
  if (!(await admission.enter(reserved, signal))) return failed('aborted', 'aborted while waiting for a turn')
  const entry = await take().catch(() => null)
  const clock = await entry?.ready
  if (!entry || !clock) {
    if (entry) await release(entry, false)
    admission.leave(reserved)
    return failed('thrown', 'The script worker did not start')
  }
  const { worker } = entry
  const share = newRunShare()
  const fetches = new AbortController()
  let inFlight = 0
  return new Promise<SandboxResult>((resolve) => {
    let done = false
    const finish = (result: SandboxResult, reusable: boolean) => {
      if (done) return
      done = true
      clearTimeout(killer)
      stopWatching()
      signal?.removeEventListener('abort', onAbort)
      fetches.abort()
      resolve(result)
      // The turn ends when the worker's memory is back: the next script must not start beside a dying one's.
      void release(entry, reusable && result.memoryBytes <= minimumMemoryBytes).then(() => admission.leave(reserved))
    }
    const killer = setTimeout(
      () => finish(failed(inFlight > 0 ? 'timeout' : 'cpu', 'terminated'), false),
      timeoutMs + graceMs,
    )
    const stopWatching = watchCpu(share.meter, clock, cpuMs, (usedMs) =>
      finish(failed('cpu', 'terminated', usedMs), false),
    )
    const onAbort = () => {
      Atomics.store(share.flag, 0, 1)
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
          const refusal =
            err instanceof SandboxFetchError ? err : new SandboxFetchError('fetch_failed', 'The request failed')
          answer({ type: 'fetched', id: message.id, ok: false, code: refusal.code, message: refusal.message })
        },
      )
    })
    worker.on('error', (err: Error & { code?: string }) =>
      finish(failed(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'thrown', 'The script worker failed'), false),
    )
    worker.on('exit', () => finish(failed('thrown', 'The script worker ended without a result'), false))
    const run: ToWorker = {
      type: 'run',
      options: {
        code,
        input,
        context,
        cpuMs,
        timeoutMs,
        memoryBytes,
        maxOutputBytes,
        maxLogLines,
        canFetch: fetch !== undefined,
      },
      share: share.buffer,
    }
    worker.postMessage(run)
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
}
