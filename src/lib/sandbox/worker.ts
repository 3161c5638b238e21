import { parentPort, workerData } from 'node:worker_threads'
import type { FromWorker, ToWorker } from './isolated.js'
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
    ok: false as const, kind: 'thrown' as const, name: 'InternalError', message: err instanceof Error ? err.message.slice(0, 500) : 'The sandbox failed', logs: [], cpuMs: 0, memoryBytes: 0,
  }))
  waiting.clear()
  port.postMessage({ type: 'result', result } satisfies FromWorker)
}

// Ready once the code is compiled (handed in by the parent: compiled once for every worker).
compiledQuickJS((workerData as { wasmModule?: WebAssembly.Module } | null)?.wasmModule).then(
  () => port.postMessage({ type: 'ready' } satisfies FromWorker),
  () => process.exit(1), // the parent sees the worker end before it was ready
)
