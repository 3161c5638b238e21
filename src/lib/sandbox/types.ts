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
  /** The script's memory: QuickJS's heap limit, and the WebAssembly memory under it (memory.ts). */
  readonly memoryBytes: number
  /** Aborts the script (the run's timeout, a cancel). */
  readonly signal?: AbortSignal
  /** Asked while the script runs in the interpreter, where no event can arrive: true stops it as aborted (a worker's shared flag). */
  readonly interrupted?: () => boolean
  /** The clock the time in the interpreter is counted on (ms): the thread's CPU time where it can be read (cpu-time.ts); the wall clock by default. */
  readonly cpuClock?: () => number
  /** Told when a stretch of time in the interpreter starts (`sliceStart`, on `cpuClock`) and ends (null), with the time used before it: what a watchdog on another thread reads. */
  readonly onSlice?: (usedMs: number, sliceStart: number | null) => void
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
export type SandboxFailureKind =
  | 'thrown'
  | 'syntax'
  | 'cpu'
  | 'timeout'
  | 'memory'
  | 'stack'
  | 'output'
  | 'aborted'
  | 'stalled'

/** `memoryBytes`: the run's WebAssembly memory at its end (it never shrinks, so its peak; 0 when none was made). */
export type SandboxResult =
  | {
      readonly ok: true
      readonly value: unknown
      readonly logs: readonly SandboxLogLine[]
      readonly cpuMs: number
      readonly memoryBytes: number
    }
  | {
      readonly ok: false
      readonly kind: SandboxFailureKind
      readonly name: string
      readonly message: string
      readonly logs: readonly SandboxLogLine[]
      readonly cpuMs: number
      readonly memoryBytes: number
    }

/** A high-resolution wall clock comparable across threads (each thread's `performance.now()` has its own origin). */
export const epochMs = (): number => performance.timeOrigin + performance.now()
