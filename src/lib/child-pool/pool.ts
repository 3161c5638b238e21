import { fork, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { FromChild, ToChild } from './protocol.js'

export interface ChildPoolOptions {
  /** The child's module (it calls serveJobs). A `.ts` entry (tests, tsx) is started with tsx's loader. */
  readonly entry: URL
  /** Children working at once; further jobs wait for a turn. */
  readonly size: number
  /** Each child's V8 heap (--max-old-space-size), in MB. */
  readonly heapMb: number
  /** How long a child may take to start (default 30 s). */
  readonly bootMs?: number
}

/** Why a part has no value: past its time (`timeout`), its child ran out of memory or died, an earlier part ended the child (`skipped`), no child could start or the wait was aborted (`unavailable`). */
export type PartFailure = 'timeout' | 'memory' | 'crashed' | 'skipped' | 'unavailable'
export type PartOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: PartFailure }

export interface RunOptions {
  /** How many parts the child answers for this job (it emits each by index). */
  readonly parts: number
  /** How long each part may take, counted from the job's start or the previous part's answer; past it the child is killed. */
  readonly partMs: number
  /** Ends a job still waiting for its turn (its parts are `unavailable`); a job already sent runs to its end. */
  readonly signal?: AbortSignal
}

export interface ChildPool {
  /** Runs one job in a child and answers one outcome per part. Never rejects. */
  run(job: unknown, options: RunOptions): Promise<PartOutcome[]>
  /** Kills every child; jobs waiting for a turn end `unavailable`. */
  close(): void
  /** For tests: children alive (idle or working) and jobs waiting for a turn. */
  stats(): { readonly alive: number; readonly working: number; readonly waiting: number; readonly spawned: number }
}

interface Child {
  readonly process: ChildProcess
  /** Resolves true once the child said it is ready, false if it died or took too long first. */
  readonly ready: Promise<boolean>
  /** The end of what the child wrote to stderr (V8 names an out-of-memory death there). */
  stderr: string
  exited: boolean
  booted: boolean
}

const stderrKept = 4096
// What V8 prints when a heap limit or an oversized allocation ends the process.
const memoryDeath = /heap out of memory|invalid size error|invalid array length|Allocation failed/i

// The built server has the child's .js beside the parent's. Under the TypeScript sources (tests, tsx) the
// child registers tsx's loader first: a child process does not inherit the parent's loader hooks.
function loaderArgs(entry: URL): string[] {
  if (!entry.pathname.endsWith('.ts')) return []
  const tsx = new URL('dist/esm/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json')))
    .href
  return ['--import', tsx]
}

/**
 * A pool of reused child processes for work that must not share the server's process: whatever a job
 * does to its child (an allocation V8 cannot survive, a builtin that never returns) ends that child only.
 * At most `size` jobs run at once, one per child; the rest wait in order. Each part of a job has `partMs`;
 * a child past it is killed (SIGKILL) and replaced, as is one that dies. Children start with an empty
 * environment, are started when first needed and kept, and never keep the server's process alive while idle.
 */
export function createChildPool(options: ChildPoolOptions): ChildPool {
  const bootMs = options.bootMs ?? 30_000
  const execArgv = [...loaderArgs(options.entry), `--max-old-space-size=${options.heapMb}`]
  const entry = fileURLToPath(options.entry)
  const idle: Child[] = []
  const queue: (() => void)[] = []
  const alive = new Set<Child>()
  let working = 0
  let spawned = 0
  let nextId = 0
  let closed = false
  // A child computing for a job never reads its channel: the server's own exit kills its children.
  process.once('exit', () => {
    for (const child of alive) child.process.kill('SIGKILL')
  })

  function spawn(): Child {
    spawned++
    // No copy of the server's environment: nothing to find in the child even past the evaluator.
    const child = fork(entry, [], {
      execArgv,
      env: {},
      serialization: 'json',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    })
    let markReady: (ok: boolean) => void = () => undefined
    const ready = new Promise<boolean>((resolve) => (markReady = resolve))
    const entryOf: Child = { process: child, ready, stderr: '', exited: false, booted: false }
    alive.add(entryOf)
    const timer = setTimeout(() => {
      markReady(false)
      child.kill('SIGKILL')
    }, bootMs)
    timer.unref()
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (text: string) => (entryOf.stderr = (entryOf.stderr + text).slice(-stderrKept)))
    child.once('message', (message: FromChild) => {
      if (message.type !== 'ready') return
      clearTimeout(timer)
      entryOf.booted = true
      markReady(true)
    })
    child.on('error', () => undefined) // a failed send or kill; the exit handler below does the accounting
    child.once('exit', () => {
      clearTimeout(timer)
      entryOf.exited = true
      alive.delete(entryOf)
      const at = idle.indexOf(entryOf)
      if (at >= 0) idle.splice(at, 1)
      markReady(false)
    })
    hold(entryOf, false)
    return entryOf
  }

  /** Whether the child keeps the server's event loop alive: only while it works for a job. */
  function hold(child: Child, held: boolean): void {
    const method = held ? 'ref' : 'unref'
    child.process[method]()
    const channel = child.process.channel as { ref(): void; unref(): void } | undefined
    channel?.[method]()
    const stderr = child.process.stderr as unknown as { ref(): void; unref(): void } | null
    stderr?.[method]()
  }

  function turn(signal: AbortSignal | undefined): Promise<boolean> {
    if (closed) return Promise.resolve(false)
    if (working < options.size) {
      working++
      return Promise.resolve(true)
    }
    if (signal?.aborted) return Promise.resolve(false)
    return new Promise((resolve) => {
      const go = () => {
        signal?.removeEventListener('abort', cancel)
        if (closed) return resolve(false)
        working++
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
    working--
    queue.shift()?.()
  }

  function take(): Child {
    for (let found = idle.pop(); found; found = idle.pop()) if (!found.exited) return found
    return spawn()
  }

  /** Back to the idle list, or (killed, dead) replaced by a fresh child when it had started fine, so the next job finds one ready. */
  function release(child: Child, reusable: boolean): void {
    hold(child, false)
    if (reusable && !child.exited && !closed) {
      idle.push(child)
      return
    }
    if (!child.exited) child.process.kill('SIGKILL')
    if (child.booted && !closed && idle.length + working <= options.size) idle.push(spawn())
  }

  function failAll(parts: number, reason: PartFailure): PartOutcome[] {
    return Array.from({ length: parts }, () => ({ ok: false as const, reason }))
  }

  return {
    async run(job, { parts, partMs, signal }) {
      if (!(await turn(signal))) return failAll(parts, 'unavailable')
      const child = take()
      hold(child, true)
      if (!(await child.ready)) {
        release(child, false)
        endTurn()
        return failAll(parts, 'unavailable')
      }
      const id = ++nextId
      const outcomes: (PartOutcome | undefined)[] = new Array<PartOutcome | undefined>(parts).fill(undefined)
      return new Promise<PartOutcome[]>((resolve) => {
        let done = false
        const finish = (failure: PartFailure | null) => {
          if (done) return
          done = true
          clearTimeout(timer)
          child.process.off('message', onMessage).off('close', onClose)
          // The part that was running takes the failure; those after it were never reached.
          const current = outcomes.findIndex((o) => o === undefined)
          const filled = outcomes.map(
            (o, i): PartOutcome =>
              o ?? { ok: false, reason: failure === null ? 'crashed' : i === current ? failure : 'skipped' },
          )
          release(child, failure === null)
          endTurn()
          resolve(filled)
        }
        const arm = () => setTimeout(() => finish('timeout'), partMs)
        let timer = arm()
        const onMessage = (message: FromChild) => {
          if (message.type === 'part' && message.id === id && message.index >= 0 && message.index < parts) {
            outcomes[message.index] = { ok: true, value: message.value }
            clearTimeout(timer)
            timer = arm()
          } else if (message.type === 'done' && message.id === id) {
            finish(null)
          }
        }
        // 'close' comes after the child's stderr is read to its end, where V8 says why it died.
        const onClose = () => finish(memoryDeath.test(child.stderr) ? 'memory' : 'crashed')
        child.process.on('message', onMessage).on('close', onClose)
        if (child.exited) return onClose()
        child.process.send({ id, job } satisfies ToChild, (err) => {
          if (err) finish('crashed')
        })
      })
    },
    close() {
      closed = true
      for (const go of queue.splice(0)) go()
      for (const child of alive) child.process.kill('SIGKILL')
      idle.length = 0
    },
    stats: () => ({ alive: alive.size, working, waiting: queue.length, spawned }),
  }
}
