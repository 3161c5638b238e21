import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'

export const durationSeconds = Number(process.env.BENCH_DURATION ?? 10)
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.once('error', reject)
  })
}

export interface Child {
  url: string
  process: ChildProcess
  stop(): Promise<void>
}

// On a machine with two or more cores, servers run on core 1 and the load generator on core 0, so the
// two never compete for one core and runs are comparable. Without taskset, both float.
const pinned = os.availableParallelism() >= 2 && spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0

/** Starts a process that serves HTTP on `port` and waits until `probePath` answers 200. */
export async function startChild(args: string[], env: Record<string, string>, port: number, probePath: string): Promise<Child> {
  const [command, argv] = pinned ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args]
  const child = spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${url}${probePath}`)).ok) break
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  return {
    url,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** Plinth itself, embedded mode, fresh data directory, logging as in production (one line per request). */
export async function startPlinth(env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort()
  const bin = new URL('../bin/plinth.js', import.meta.url).pathname
  return startChild([bin, 'serve'], { DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-bench-')), PORT: String(port), HOST: '127.0.0.1', ...env }, port, '/health')
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where there is no /proc. */
export function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime + stime, in USER_HZ ticks
  } catch {
    return null
  }
}

export interface Measurement {
  /** Requests per second over `durationSeconds`. */
  rate: number
  /** Server CPU microseconds per request, when the server's pid is known and /proc exists. */
  cpuMicros: number | null
}

/** Loads `server` for `durationSeconds`; fails loudly on any error or non-2xx answer. */
export async function measure(server: Child, path: string, options: Partial<autocannon.Options> = {}): Promise<Measurement> {
  const before = cpuSeconds(server.process.pid)
  const result = await autocannon({ url: `${server.url}${path}`, connections, duration: durationSeconds, ...options })
  const after = cpuSeconds(server.process.pid)
  const bad = result.errors + result.timeouts + result.non2xx
  if (bad > 0) throw new Error(`${server.url}${path}: ${bad} failed requests (errors ${result.errors}, non-2xx ${result.non2xx})`)
  const cpuMicros = before !== null && after !== null ? ((after - before) * 1e6) / result.requests.total : null
  return { rate: result.requests.average, cpuMicros }
}

export interface Comparison {
  name: string
  target: number
  /** Median of the per-round rate ratios, subject / baseline: the figure held against the target. */
  ratio: number
  ratios: number[]
  baseline: Measurement
  subject: Measurement
  ok: boolean
}

/**
 * Runs baseline and subject alternately, `rounds` times, so drift in the machine's speed lands on both.
 * The verdict is the median of the per-round rate ratios (robust to one noisy round); the CPU cost per
 * request of each server is printed beside it, as it is steadier than rates on a shared machine.
 */
export async function compare(
  name: string,
  baseline: () => Promise<Measurement>,
  subject: () => Promise<Measurement>,
  target: number,
  rounds = Number(process.env.BENCH_ROUNDS ?? 5),
): Promise<Comparison> {
  await baseline() // warm-up, discarded: JIT and connection set-up
  await subject()
  const b: Measurement[] = []
  const s: Measurement[] = []
  for (let i = 0; i < rounds; i++) {
    b.push(await baseline())
    s.push(await subject())
  }
  const ratios = s.map((x, i) => x.rate / b[i]!.rate)
  const ratio = median(ratios)
  return { name, target, ratio, ratios, baseline: summarise(b), subject: summarise(s), ok: ratio >= target }
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((x, y) => x - y)
  return sorted[Math.floor(sorted.length / 2)]!
}

function summarise(ms: Measurement[]): Measurement {
  const cpu = ms.map((m) => m.cpuMicros).filter((x): x is number => x !== null)
  return { rate: median(ms.map((m) => m.rate)), cpuMicros: cpu.length > 0 ? median(cpu) : null }
}

export function report(r: Comparison): void {
  if (!pinned) console.log('(not pinned to cores: expect more noise)')
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  const cpu = (m: Measurement) => (m.cpuMicros === null ? '' : `, ${m.cpuMicros.toFixed(1)} µs CPU/req`)
  console.log(
    `${r.name}: ${fmt(r.subject.rate)} req/s${cpu(r.subject)} vs baseline ${fmt(r.baseline.rate)} req/s${cpu(r.baseline)}\n` +
      `  ratio ${r.ratio.toFixed(2)} (median of ${r.ratios.map((x) => x.toFixed(2)).join(', ')}; target ≥ ${r.target}) ` +
      (r.ok ? 'OK' : 'BELOW TARGET'),
  )
}

/** One JSON call to Plinth's API as `token`; throws on any non-2xx answer, naming it. */
export async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

/** The benchmarks' record `i` of the `items` collection (title, views, status, meta). */
export const item = (i: number) => ({ title: `Item number ${i}`, views: (i * 7919) % 10_000, status: i % 3 === 0 ? 'draft' : 'published', meta: { n: i } })
