import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import {
  api as call,
  cpuSeconds,
  importChunk,
  importsInFlight,
  importThroughApi,
  item,
  freePort,
  startChild,
  type Child,
} from './support.js'

// BENCH_EXPORT_ROWS rows are imported through the API (the import figure), then exported as CSV by a freshly
// started server (the export figure and its peak memory).
const rows = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000)
const chunk = 1000
const importTarget = 0.5
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const peakTargetMb = 200

const fields = [
  { name: 'title', type: 'text', required: true },
  { name: 'views', type: 'integer', required: false, indexed: true },
  { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'published'] },
  { name: 'meta', type: 'json', required: false },
]

function plinth(dataDir: string, port: number): Promise<Child> {
  const bin = new URL('../bin/plinth.js', import.meta.url).pathname
  return startChild(
    [bin, 'serve'],
    { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PASSWORD_HASH_ITERATIONS: '1000' },
    port,
    '/health',
  )
}

/** A field of /proc/<pid>/status in MB (VmHWM: peak resident set; VmRSS: now); null without /proc. */
function memoryMb(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`))
    return line ? Number(line.split(/\s+/)[1]) / 1024 : null
  } catch {
    return null
  }
}

/**
 * The same rows on a bare better-sqlite3 connection, in a table made from the very SQL Plinth made for the
 * collection (its indexes, its full-text table and triggers), one transaction per 1000 rows and one
 * prepared INSERT.
 */
function rawTable(projectDb: string) {
  const source = new Database(projectDb, { readonly: true })
  const schema = source
    .prepare(
      `select type, name, sql from sqlite_master where sql is not null and (
         (type = 'table' and (name = 'items' or sql like 'CREATE VIRTUAL TABLE%')) or (type in ('index', 'trigger') and tbl_name = 'items'))
       order by case type when 'table' then 0 when 'index' then 1 else 2 end`,
    )
    .all() as { type: string; name: string; sql: string }[]
  source.close()
  const db = new Database(join(mkdtempSync(join(tmpdir(), 'plinth-raw-')), 'raw.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  for (const { sql } of schema) db.exec(sql)
  const insert = db.prepare(
    'insert into items (id, created_at, updated_at, created_by, updated_by, deleted_at, _version, owned_by, title, views, status, meta) values (?, ?, ?, ?, ?, null, 1, null, ?, ?, ?, ?)',
  )
  const batch = db.transaction((from: number, count: number) => {
    const now = Math.floor(Date.now() / 1000)
    for (let i = from; i < from + count; i++) {
      const v = item(i)
      insert.run(
        randomBytes(16).toString('hex'),
        now,
        now,
        'u',
        'u',
        v.title,
        v.views,
        v.status,
        JSON.stringify(v.meta),
      )
    }
  })
  return {
    /** Rows [from, to), 1000 per transaction. */
    insert(from: number, to: number): void {
      for (let at = from; at < to; at += chunk) batch(at, Math.min(chunk, to - at))
    },
    close: () => db.close(),
  }
}

interface Side {
  seconds: number
  cpu: number
}

/** Wall-clock and CPU seconds of `work`; CPU from /proc for a pid, else this process's own. */
async function timed(work: () => Promise<void> | void, pid?: number): Promise<Side> {
  const cpu = () =>
    pid === undefined ? process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 : (cpuSeconds(pid) ?? 0)
  const cpuBefore = cpu()
  const started = performance.now()
  await work()
  return { seconds: (performance.now() - started) / 1000, cpu: cpu() - cpuBefore }
}

/** Streams the CSV export to nowhere, counting; rows per second and megabytes. */
async function exportCsv(url: string, token: string): Promise<{ rate: number; mb: number }> {
  const started = performance.now()
  const res = await fetch(`${url}/api/v1/collections/items/records/export?format=csv`, {
    headers: { authorization: `Bearer ${token}` },
  })
  if (!res.ok || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`)
  let bytes = 0
  let lines = 0
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += part.length
    for (let i = 0; i < part.length; i++) if (part[i] === 10) lines++
  }
  const seconds = (performance.now() - started) / 1000
  if (lines - 1 !== rows) throw new Error(`export: ${lines - 1} rows, expected ${rows}`)
  return { rate: rows / seconds, mb: bytes / 1024 / 1024 }
}

/**
 * Import and export of records: (b) NDJSON import through the API beside raw better-sqlite3 batches of the
 * same rows into the same schema (target ≥ 0.5), then (a) a CSV export of every row by a freshly started
 * server, whose peak resident memory (VmHWM) must stay under 200 MB.
 */
export async function benchDataTools() {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-data-'))
  const port = await freePort()
  let server = await plinth(dataDir, port)
  let token: string
  const ratios: number[] = []
  const api: Side = { seconds: 0, cpu: 0 }
  const raw: Side = { seconds: 0, cpu: 0 }
  try {
    token = (
      await call(server.url, '', 'POST', '/api/auth/sign-up/email', {
        email: 'bench@example.com',
        password: 'bench password',
        name: 'B',
      })
    ).token
    await call(server.url, token, 'POST', '/api/v1/collections', { name: 'items', fields })
    const projectDb = readdirSync(join(dataDir, 'projects')).find((f) => f.endsWith('.db'))
    if (!projectDb) throw new Error('no project database found')
    const baseline = rawTable(join(dataDir, 'projects', projectDb))
    // Rounds alternate the two sides over consecutive slices of the rows, so the machine's drift (other
    // processes, a growing table) lands on both; the verdict is the median of the per-round ratios.
    const per = Math.max(chunk, Math.ceil(rows / rounds / chunk) * chunk)
    for (let from = 0; from < rows; from += per) {
      const to = Math.min(rows, from + per)
      const a = await timed(() => importThroughApi(server.url, token, from, to), server.process.pid)
      const b = await timed(() => baseline.insert(from, to))
      ratios.push(b.seconds / a.seconds)
      api.seconds += a.seconds
      api.cpu += a.cpu
      raw.seconds += b.seconds
      raw.cpu += b.cpu
    }
    baseline.close()
  } finally {
    await server.stop()
  }
  const ratio = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!
  const importOk = ratio >= importTarget
  console.log(
    `import-ndjson (${fmt(rows)} rows, ${importChunk}-line chunks, ${importsInFlight} in flight): ${fmt(rows / api.seconds)} records/s (${fmt((api.cpu * 1e6) / rows)} µs server CPU/record)` +
      ` | raw better-sqlite3 batches ${fmt(rows / raw.seconds)} rows/s (${fmt((raw.cpu * 1e6) / rows)} µs CPU/row)\n` +
      `  ratio ${ratio.toFixed(2)} (median of ${ratios.map((x) => x.toFixed(2)).join(', ')}; target ≥ ${importTarget}) ${importOk ? 'OK' : 'BELOW TARGET'}`,
  )

  // A fresh process, so its peak memory is the export's, not the import's.
  server = await plinth(dataDir, port)
  try {
    const idle = memoryMb(server.process.pid, 'VmRSS')
    const startPeak = memoryMb(server.process.pid, 'VmHWM')
    const { rate, mb } = await exportCsv(server.url, token)
    const peak = memoryMb(server.process.pid, 'VmHWM')
    const exportOk = peak === null || peak < peakTargetMb
    console.log(
      `export csv (${fmt(rows)} rows, ${mb.toFixed(0)} MB): ${fmt(rate)} rows/s | server peak RSS ${peak === null ? 'n/a' : `${peak.toFixed(0)} MB`} (before the export: RSS ${idle === null ? 'n/a' : `${idle.toFixed(0)} MB`}, peak ${startPeak === null ? 'n/a' : `${startPeak.toFixed(0)} MB`}; target < ${peakTargetMb} MB) ${exportOk ? 'OK' : 'ABOVE TARGET'}`,
    )
    return { ok: importOk && exportOk }
  } finally {
    await server.stop()
  }
}
