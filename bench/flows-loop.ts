import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { api, connections, durationSeconds, startPlinth, type Child } from './support.js'

/**
 * Issue 16: a 10-step flow whose loop creates 100 records (crud_create inside `loop`, serial), run
 * through POST /execute, beside the same inserts through POST /records on the same server. Prints
 * completed runs/s, records/s through flows, records/s through the API, and the ratio. No target: the
 * figure says what a record written by a flow costs against one written by a client.
 */
const itemsPerRun = 100
const collection = 'bench_loop'
/** Runs in flight at once: each holds 100 inserts, so far fewer than the API baseline's connections. */
const runsInFlight = Number(process.env.BENCH_LOOP_RUNS ?? 8)

const items = Array.from({ length: itemsPerRun }, (_, i) => ({ n: i, label: `item ${i}` }))
const steps = [
  { key: 'items', type: 'set_variable', config: { key: 'items', value: '{{$trigger.body.items}}' } },
  { key: 'batch', type: 'set_variable', config: { key: 'batch', value: '{{$run.id}}' } },
  { key: 'start', type: 'log', config: { message: 'batch {{$steps.batch}}: {{$trigger.body.label}}', level: 'debug' } },
  {
    key: 'each',
    type: 'loop',
    config: {
      items: '{{$steps.items}}',
      mode: 'serial',
      operations: [
        {
          key: 'insert',
          type: 'crud_create',
          config: {
            collection,
            data: { n: '{{$steps.each.item.n}}', label: '{{$steps.each.item.label}}', batch: '{{$steps.batch}}' },
          },
        },
      ],
    },
  },
  {
    key: 'stored',
    type: 'crud_query',
    config: {
      collection,
      filter: { batch: { _eq: '{{$steps.batch}}' } },
      aggregate: [{ fn: 'count' }, { fn: 'sum', field: 'n' }],
    },
  },
  {
    key: 'expected',
    type: 'math',
    config: { operation: 'formula', formula: `${itemsPerRun} * (${itemsPerRun} - 1) / 2` },
  },
  {
    key: 'check',
    type: 'condition',
    config: { rules: { field: '$steps.stored.rows[0].sum_n', operator: 'eq', value: '{{$steps.expected.result}}' } },
  },
  {
    key: 'fail',
    type: 'throw_error',
    condition: { field: '$steps.check.result', operator: 'eq', value: false },
    config: { message: 'the loop stored {{$steps.stored.rows[0].count}} records' },
  },
  { key: 'count', type: 'set_variable', config: { key: 'count', value: '{{$steps.stored.rows[0].count}}' } },
  { key: 'done', type: 'log', config: { message: 'batch {{$steps.batch}}: {{$steps.count}} records' } },
]

interface LoopFigures {
  readonly runsPerSecond: number
  readonly flowRecordsPerSecond: number
  readonly apiRecordsPerSecond: number
  readonly completed: number
  readonly failed: number
}

/** The loop flow's figures, or null when `loop` (issue 16, ops-logic) is not registered on this tree. */
export async function loopInserts(): Promise<LoopFigures | null> {
  const plinth: Child = await startPlinth({
    PASSWORD_HASH_ITERATIONS: '1000',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'plinth-bench-')),
    LOG_LEVEL: 'warn',
  })
  try {
    const { token } = await api(plinth.url, '', 'POST', '/api/auth/sign-up/email', {
      email: 'bench@example.com',
      password: 'bench password',
      name: 'B',
    })
    const fields = [
      { name: 'n', type: 'integer', required: false },
      { name: 'label', type: 'text', required: false },
      { name: 'batch', type: 'text', required: false },
    ]
    await api(plinth.url, token, 'POST', '/api/v1/collections', { name: collection, fields })
    const created = await fetch(`${plinth.url}/api/v1/automate/flows`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Bench loop',
        triggerType: 'manual',
        triggerConfig: {},
        operations: steps,
        options: { concurrency: 'parallel', log_level: 'errors_only' },
      }),
    })
    if (created.status === 422 && (await created.text()).includes("unknown operation type 'loop'")) return null
    if (!created.ok) throw new Error(`create flow: ${created.status} ${await created.text()}`)
    const flowId = ((await created.json()) as { data: { id: string } }).data.id
    await api(plinth.url, token, 'POST', `/api/v1/automate/flows/${flowId}/publish`, { changeSummary: 'bench' })
    await api(plinth.url, token, 'PATCH', `/api/v1/automate/flows/${flowId}/status`, { status: 'active' })
    await api(plinth.url, token, 'PATCH', '/api/v1/automate/quotas', {
      maxRunsPerHour: 10_000_000,
      maxConcurrentRuns: 1000,
    })

    // Flows: keep `runsInFlight` runs going for the duration; each waits for its run to end.
    const runIds: string[] = []
    const until = Date.now() + durationSeconds * 1000
    const flowStart = Date.now()
    await Promise.all(
      Array.from({ length: runsInFlight }, async () => {
        while (Date.now() < until) {
          const started = await api(plinth.url, token, 'POST', `/api/v1/automate/flows/${flowId}/execute`, {
            items,
            label: 'bench',
          })
          const runId = started.data.runId as string
          runIds.push(runId)
          await finished(plinth.url, token, runId)
        }
      }),
    )
    const flowSeconds = (Date.now() - flowStart) / 1000
    let completed = 0
    let failed = 0
    for (const runId of runIds) {
      const run = (await api(plinth.url, token, 'GET', `/api/v1/automate/runs/${runId}`)).data
      if (run.status === 'completed') completed++
      else {
        failed++
        if (failed === 1) console.error(`  a loop run ended ${run.status}: ${JSON.stringify(run.error)}`)
      }
    }
    const flowRecords = (await api(plinth.url, token, 'GET', `/api/v1/collections/${collection}/records?limit=1`))
      .total as number

    // The same inserts through the API, on the same server and collection.
    const result = await autocannon({
      url: `${plinth.url}/api/v1/collections/${collection}/records`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ n: 1, label: 'item 1', batch: 'api' }),
      connections,
      duration: durationSeconds,
    })
    const refused = result.errors + result.timeouts + result.non2xx
    if (refused > 0) throw new Error(`POST /records: ${refused} requests were not accepted`)
    const apiRecords = (
      await api(
        plinth.url,
        token,
        'GET',
        `/api/v1/collections/${collection}/records?limit=1&filter=${encodeURIComponent(JSON.stringify({ batch: { _eq: 'api' } }))}`,
      )
    ).total as number
    return {
      runsPerSecond: completed / flowSeconds,
      flowRecordsPerSecond: flowRecords / flowSeconds,
      apiRecordsPerSecond: apiRecords / durationSeconds,
      completed,
      failed,
    }
  } finally {
    await plinth.stop()
  }
}

async function finished(url: string, token: string, runId: string): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    const run = (await api(url, token, 'GET', `/api/v1/automate/runs/${runId}`)).data
    if (!['pending', 'running'].includes(run.status)) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`run ${runId} did not end within a minute`)
}

/** Prints the loop figures under the flows benchmark; ok unless a run failed. */
export async function reportLoopInserts(): Promise<boolean> {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  const figures = await loopInserts()
  console.log(
    `flows with a loop (10 steps, loop of ${itemsPerRun} with crud_create, ${runsInFlight} runs in flight, ${durationSeconds} s):`,
  )
  if (!figures) {
    console.log('  not measured (the loop operation is not registered yet)')
    return true
  }
  console.log(
    `  ${figures.runsPerSecond.toFixed(1)} completed runs/s (${fmt(figures.completed)} runs, ${fmt(figures.failed)} failed)`,
  )
  console.log(
    `  records/s: ${fmt(figures.flowRecordsPerSecond)} through the flow's loop, ${fmt(figures.apiRecordsPerSecond)} through POST /records (${connections} connections)`,
  )
  console.log(`  ratio flow / API: ${(figures.flowRecordsPerSecond / figures.apiRecordsPerSecond).toFixed(2)}`)
  return figures.failed === 0
}
