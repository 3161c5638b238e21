// npm run bench schema [--rows N]: a metadata-only schema change (an enum value added) on a large collection
// against the same change on a small one, in the same run (issue 28: under 100 ms whatever the row count).
import type { BenchOptions } from './run.js'
import { api, importThroughApi, startPlinth } from './support.js'

const smallRows = 1000
const tries = Number(process.env.BENCH_ROUNDS ?? 5)
/** The target of issue 28: a metadata-only change under 100 ms, whatever the row count. */
const targetMs = 100

const fieldsWith = (values: readonly string[]) => [
  { name: 'title', type: 'text', required: true },
  { name: 'views', type: 'integer', required: false, indexed: true },
  { name: 'status', type: 'enum', required: false, indexed: true, enumValues: [...values] },
  { name: 'meta', type: 'json', required: false },
]

/** Milliseconds of a PATCH that adds one enum value to `status` (the complete field array, as the spec says). */
async function addEnumValue(url: string, token: string, collection: string, values: string[]): Promise<number> {
  values.push(`extra_${values.length}`)
  const started = performance.now()
  await api(url, token, 'PATCH', `/api/v1/collections/${collection}`, { fields: fieldsWith(values) })
  return performance.now() - started
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export async function benchSchemaChanges(options: BenchOptions): Promise<{ ok: boolean }> {
  const rows = options.rows ?? Number(process.env.BENCH_SCHEMA_ROWS ?? 1_000_000)
  const plinth = await startPlinth({ PASSWORD_HASH_ITERATIONS: '1000' })
  try {
    const { token } = await api(plinth.url, '', 'POST', '/api/auth/sign-up/email', {
      email: 'bench@example.com',
      password: 'bench password',
      name: 'B',
    })
    for (const name of ['small', 'items'])
      await api(plinth.url, token, 'POST', '/api/v1/collections', { name, fields: fieldsWith(['draft', 'published']) })
    const seeding = performance.now()
    await importThroughApi(plinth.url, token, 0, smallRows, undefined, 'small')
    await importThroughApi(plinth.url, token, 0, rows, undefined, 'items')
    console.log(`seeded ${rows.toLocaleString('en-US')} rows in ${((performance.now() - seeding) / 1000).toFixed(0)} s`)
    // Alternated, so both meet the same machine.
    const small: number[] = []
    const large: number[] = []
    const values = { small: ['draft', 'published'], items: ['draft', 'published'] }
    for (let i = 0; i < tries; i++) {
      small.push(await addEnumValue(plinth.url, token, 'small', values.small))
      large.push(await addEnumValue(plinth.url, token, 'items', values.items))
    }
    const ok = median(large) < targetMs
    console.log(
      `schema: add an enum value, ${rows.toLocaleString('en-US')} rows ${median(large).toFixed(1)} ms ` +
        `vs ${smallRows.toLocaleString('en-US')} rows ${median(small).toFixed(1)} ms (medians of ${large.length}); ` +
        `ratio ${(median(large) / median(small)).toFixed(2)}; target < ${targetMs} ms ${ok ? 'OK' : 'ABOVE TARGET'}`,
    )
    return { ok }
  } finally {
    await plinth.stop()
  }
}
