import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { mkdtempSync, readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
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
export async function startChild(
  args: string[],
  env: Record<string, string>,
  port: number,
  probePath: string,
): Promise<Child> {
  // BENCH_NODE_ARGS: options for the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const extra = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []
  const [command, argv] = pinned
    ? ['taskset', ['-c', '1', process.execPath, ...extra, ...args]]
    : [process.execPath, [...extra, ...args]]
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
  return startChild(
    [bin, 'serve'],
    { DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-bench-')), PORT: String(port), HOST: '127.0.0.1', ...env },
    port,
    '/health',
  )
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

/** Options `npm run bench` takes from its command line (run.ts); each benchmark reads those it knows. */
export interface BenchOptions {
  /** Rows the records benchmark seeds (else BENCH_RECORDS, else 10,000). */
  rows?: number
}

export interface Measurement {
  /** Requests per second over `durationSeconds`. */
  rate: number
  /** Server CPU microseconds per request, when the server's pid is known and /proc exists. */
  cpuMicros: number | null
  /** Request latency percentiles in milliseconds, as the load generator saw them (request sent to answer read). */
  latency: { p50: number; p99: number }
  /** Connections the load was spread over: with many, latency is mostly time queued behind the others. */
  connections: number
}

/**
 * Loads `server` for `durationSeconds`; fails loudly on any error or non-2xx answer. Latency comes from
 * autocannon's histogram, in whole milliseconds; `exactLatency` times each answer instead (sub-millisecond,
 * for one connection), at the price of an event per answer in the load generator.
 */
export async function measure(
  server: Child,
  path: string,
  options: Partial<autocannon.Options> = {},
  how: { exactLatency?: boolean } = {},
): Promise<Measurement> {
  const before = cpuSeconds(server.process.pid)
  // Without a callback autocannon answers its instance, an event emitter that is also a promise of the result.
  const run = autocannon({
    url: `${server.url}${path}`,
    connections,
    duration: durationSeconds,
    ...options,
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>
  const times: number[] = []
  if (how.exactLatency) run.on('response', (_client, _status, _bytes, ms) => times.push(ms))
  const result = await run
  const after = cpuSeconds(server.process.pid)
  const bad = result.errors + result.timeouts + result.non2xx
  if (bad > 0)
    throw new Error(`${server.url}${path}: ${bad} failed requests (errors ${result.errors}, non-2xx ${result.non2xx})`)
  const cpuMicros = before !== null && after !== null ? ((after - before) * 1e6) / result.requests.total : null
  times.sort((a, b) => a - b)
  const latency = how.exactLatency
    ? { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
    : { p50: result.latency.p50, p99: result.latency.p99 }
  return { rate: result.requests.average, cpuMicros, latency, connections: options.connections ?? connections }
}

/** The q-quantile of ascending `sorted` (nearest rank); NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
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
  return {
    rate: median(ms.map((m) => m.rate)),
    cpuMicros: cpu.length > 0 ? median(cpu) : null,
    latency: { p50: median(ms.map((m) => m.latency.p50)), p99: median(ms.map((m) => m.latency.p99)) },
    connections: ms[0]?.connections ?? connections,
  }
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
export const item = (i: number) => ({
  title: `Item number ${i}`,
  views: (i * 7919) % 10_000,
  status: i % 3 === 0 ? 'draft' : 'published',
  meta: { n: i },
})

/** Lines per POST import-ndjson (the endpoint's own limit) and posts in flight at once. */
export const importChunk = 1000
// The next body is on the wire while the server stores the previous one.
export const importsInFlight = 2

/** One POST over `agent`; the status and the body text. */
function post(
  agent: Agent,
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (part: Buffer) => parts.push(part))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Items [from, to) (`item(i)`) into `collection` (`items`) through POST import-ndjson in `importChunk`-line chunks,
 * `importsInFlight` at a time, over connections of their own: the raw baseline blocks this process between
 * rounds, long enough for the server to close idle kept-alive connections, which a pooled client would then
 * try to reuse. `stored` sees each chunk's records as answered (ids and all) with the index of its first item.
 */
export async function importThroughApi(
  url: string,
  token: string,
  from: number,
  to: number,
  stored?: (records: { id: string }[], first: number) => void,
  collection = 'items',
): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: importsInFlight })
  let next = from
  async function worker(): Promise<void> {
    while (next < to) {
      const start = next
      next += importChunk
      const count = Math.min(importChunk, to - start)
      let body = ''
      for (let i = 0; i < count; i++) body += `${JSON.stringify(item(start + i))}\n`
      const { status, text } = await post(
        agent,
        url,
        `/api/v1/collections/${collection}/records/import-ndjson`,
        { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body,
      )
      if (status !== 200) throw new Error(`import-ndjson: ${status} ${text.slice(0, 500)}`)
      const result = JSON.parse(text) as { imported: number; failed: number; records: { id: string }[] }
      if (result.imported !== count || result.failed !== 0)
        throw new Error(`import-ndjson stored ${result.imported} of ${count}: ${text.slice(0, 500)}`)
      stored?.(result.records, start)
    }
  }
  try {
    await Promise.all(Array.from({ length: importsInFlight }, worker))
  } finally {
    agent.destroy()
  }
}
