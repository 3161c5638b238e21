import { api, importThroughApi, item, measure, type Child, type Measurement } from './support.js'

/**
 * Issue 19: the records benchmark's four scenarios (GET by id, list 25 with a filter and a sort, create,
 * patch) on a collection of each storage type, seeded alike, in one run on one server. d1 is the base the
 * others are compared with. A type this build refuses (400) is reported and skipped, so the table grows as
 * types land. BENCH_STORAGE_TYPES (comma-separated) picks some.
 */
export const benchedStorageTypes = ['d1', 'durable_object', 'r2_sql', 'kv'] as const

const scenarios = ['GET by id', 'list 25 (filter + sort)', 'create', 'patch'] as const
type Scenario = (typeof scenarios)[number]

const listQuery = `limit=25&filter=${encodeURIComponent(JSON.stringify({ views: { _gt: 5000 }, status: { _eq: 'published' } }))}&sortBy=-views`
const fields = [
  { name: 'title', type: 'text', required: true },
  { name: 'views', type: 'integer', required: false, indexed: true },
  { name: 'status', type: 'enum', required: false, enumValues: ['draft', 'published'] },
  { name: 'meta', type: 'json', required: false },
]
const idsKept = 10_000

interface Subject {
  type: string
  runs: Record<Scenario, () => Promise<Measurement>>
}

/** Makes and seeds one collection of the type; null (after saying why) when this build refuses the type. */
async function subjectOf(
  plinth: Child,
  token: string,
  type: string,
  rows: number,
  compound: boolean,
): Promise<Subject | null> {
  const name = `items_${type}`
  const created = await fetch(`${plinth.url}/api/v1/collections`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name,
      storageType: type,
      fields,
      ...(compound ? { indexes: [{ fields: ['status', '-views'] }] } : {}),
    }),
  })
  if (created.status === 400) {
    console.log(`  ${type}: not available in this build (${((await created.json()) as { message: string }).message})`)
    return null
  }
  if (created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${await created.text()}`)
  const ids: string[] = []
  const keepEvery = Math.max(1, Math.floor(rows / idsKept))
  await importThroughApi(
    plinth.url,
    token,
    0,
    rows,
    (records, first) => records.forEach((r, k) => (first + k) % keepEvery === 0 && ids.push(r.id)),
    name,
  )
  // r2_sql: the seed is published, as a deployment would have it; this one instance stays the writer and
  // reads its working copy (the path every write and the writer's reads take).
  if (type === 'r2_sql') await api(plinth.url, token, 'POST', `/api/v1/collections/${name}/publish`)
  const auth = { authorization: `Bearer ${token}` }
  const path = `/api/v1/collections/${name}/records`
  let next = 0
  const byId = { setupRequest: (req: any) => ({ ...req, path: `${path}/${ids[next++ % ids.length]}` }) }
  const patch = {
    setupRequest: (req: any) => ({
      ...req,
      method: 'PATCH',
      path: `${path}/${ids[next++ % ids.length]}`,
      body: JSON.stringify({ views: next % 10_000 }),
    }),
  }
  return {
    type,
    runs: {
      'GET by id': () => measure(plinth, '/', { headers: auth, requests: [byId] }),
      'list 25 (filter + sort)': () => measure(plinth, `${path}?${listQuery}`, { headers: auth }),
      create: () =>
        measure(plinth, path, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(item(1)),
        }),
      patch: () =>
        measure(plinth, '/', { headers: { ...auth, 'content-type': 'application/json' }, requests: [patch] }),
    },
  }
}

/**
 * Measures every scenario on every type in `rounds` rounds, the types alternating within a round (the
 * machine's speed drifts within minutes), and prints each type's median round beside d1's. Informational:
 * the targets of the records benchmark are judged on its own d1 run.
 */
export async function benchStorageTypes(
  plinth: Child,
  token: string,
  rows: number,
  rounds: number,
  compound: boolean,
): Promise<void> {
  const chosen = (process.env.BENCH_STORAGE_TYPES ?? benchedStorageTypes.join(','))
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
  console.log(
    `storage types (issue 19): the four scenarios over ${rows.toLocaleString('en-US')} rows each, ${rounds} rounds, types alternating`,
  )
  const subjects: Subject[] = []
  for (const type of chosen) {
    const subject = await subjectOf(plinth, token, type, rows, compound)
    if (subject) subjects.push(subject)
  }
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  for (const scenario of scenarios) {
    const rates = new Map<string, number[]>(subjects.map((s) => [s.type, []]))
    const cpu = new Map<string, number[]>(subjects.map((s) => [s.type, []]))
    for (const subject of subjects) await subject.runs[scenario]() // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const subject of subjects) {
        const m = await subject.runs[scenario]()
        rates.get(subject.type)!.push(m.rate)
        if (m.cpuMicros !== null) cpu.get(subject.type)!.push(m.cpuMicros)
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
    const base = rates.has('d1') ? median(rates.get('d1')!) : NaN
    const cells = subjects.map((s) => {
      const rate = median(rates.get(s.type)!)
      const micros = median(cpu.get(s.type)!)
      const vs = s.type === 'd1' || Number.isNaN(base) ? '' : ` → ${(rate / base).toFixed(2)} of d1`
      return `${s.type} ${fmt(rate)} req/s${Number.isNaN(micros) ? '' : ` (${micros.toFixed(0)} µs CPU)`}${vs}`
    })
    console.log(`  ${scenario}: ${cells.join(' | ')}`)
  }
}
