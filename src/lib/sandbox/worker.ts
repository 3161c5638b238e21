import { parentPort, workerData } from 'node:worker_threads'
import type { FromWorker, ToWorker } from './isolated.js'
import { ownThreadId, threadClock } from './cpu-time.js'
import { compiledQuickJS } from './memory.js'
import { runInSandbox } from './quickjs.js'
import { SandboxFetchError, type SandboxFetchResponse, type SandboxOptions } from './types.js'
import { openRunShare, writeMeter } from './watchdog.js'

// A script worker (isolated.ts starts and reuses it): one run at a time, each in a fresh WebAssembly
// instance of the code the parent compiled once. Its event loop may block in the interpreter for as long
// as a script computes; the parent watches the shared meter and can always terminate it.
const port = parentPort!
let controller = new AbortController()
const waiting = new Map<number, { resolve: (r: SandboxFetchResponse) => void; reject: (e: Error) => void }>()
let nextId = 0
const tid = ownThreadId()
/** This thread's CPU time where it can be read (the parent reads the same clock through `tid`), else the wall clock. */
const cpuClock = threadClock(tid)

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') return void start(message)
  if (message.type === 'abort') return controller.abort()
  const pending = waiting.get(message.id)
  waiting.delete(message.id)
  if (message.ok) pending?.resolve(message.response)
  else pending?.reject(new SandboxFetchError(message.code, message.message))
})

async function start({ options, share }: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  controller = new AbortController()
  const { flag, meter } = openRunShare(share)
  const sandbox: SandboxOptions = {
    ...options,
    signal: controller.signal,
    interrupted: () => Atomics.load(flag, 0) !== 0,
    cpuClock,
    onSlice: (usedMs, sliceStart) => writeMeter(meter, usedMs, sliceStart),
    ...(options.canFetch
      ? {
          fetch: (request) =>
            new Promise<SandboxFetchResponse>((resolve, reject) => {
              const id = ++nextId
              waiting.set(id, { resolve, reject })
              port.postMessage({ type: 'fetch', id, request } satisfies FromWorker)
            }),
        }
      : {}),
  }
  const result = await runInSandbox(sandbox).catch((err: unknown) => ({
    ok: false as const,
    kind: 'thrown' as const,
    name: 'InternalError',
    message: err instanceof Error ? err.message.slice(0, 500) : 'The sandbox failed',
    logs: [],
    cpuMs: 0,
    memoryBytes: 0,
  }))
  waiting.clear()
  port.postMessage({ type: 'result', result } satisfies FromWorker)
}

// Ready once the code is compiled (handed in by the parent: compiled once for every worker) and has run
// once: WebAssembly functions compile on their first call, time no script should be charged for.
compiledQuickJS((workerData as { wasmModule?: WebAssembly.Module } | null)?.wasmModule)
  .then(() =>
    runInSandbox({
      code: 'return [1, "a", { b: 2 }].map((x) => JSON.stringify(x))',
      input: {},
      context: {},
      cpuMs: 60_000,
      timeoutMs: 60_000,
      memoryBytes: 1024 * 1024,
    }),
  )
  .then(
    () => port.postMessage({ type: 'ready', tid } satisfies FromWorker),
    () => process.exit(1), // the parent sees the worker end before it was ready
  )
