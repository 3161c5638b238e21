// npm run bench schema [--rows N]: schema changes on a large collection against the same change on a small
// one, in the same run: an enum value added and a label changed (metadata only; issue 28: under 100 ms
// whatever the row count) and a field renamed (a column renamed in place; measured, no target).
import type { BenchOptions } from './run.js'
import { api, importThroughApi, startPlinth } from './support.js'

const smallRows = 1000
const tries = Number(process.env.BENCH_ROUNDS ?? 5)
/** The target of issue 28: a metadata-only change under 100 ms, whatever the row count. */
const targetMs = 100

/** What a collection's PATCHes change in turn: its enum values, its title field's name and label. */
interface Shape {
  values: string[]
  title: string
  label: string
}

const fieldsWith = (values: readonly string[], title = 'title', label?: string) => [
  { name: title, type: 'text', required: true, ...(label ? { label } : {}) },
  { name: 'views', type: 'integer', required: false, indexed: true },
  { name: 'status', type: 'enum', required: false, indexed: true, enumValues: [...values] },
  { name: 'meta', type: 'json', required: false },
]

async function timed(url: string, token: string, collection: string, body: unknown): Promise<number> {
  const started = performance.now()
  await api(url, token, 'PATCH', `/api/v1/collections/${collection}`, body)
  return performance.now() - started
}

/** The changes measured, each a PATCH of the complete field array built from the collection's shape. */
const changes: Record<string, (shape: Shape) => unknown> = {
  'add an enum value': (shape) => {
    shape.values.push(`extra_${shape.values.length}`)
    return { fields: fieldsWith(shape.values, shape.title, shape.label) }
  },
  'change a label': (shape) => {
    shape.label = `Title ${shape.values.length}.${Math.random().toString(36).slice(2, 6)}`
    return { fields: fieldsWith(shape.values, shape.title, shape.label) }
  },
  'rename a field': (shape) => {
    const from = shape.title
    shape.title = from === 'title' ? 'heading' : 'title'
    return { fields: fieldsWith(shape.values, shape.title, shape.label), renames: { [from]: shape.title } }
  },
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
    const shapes: Record<string, Shape> = {
      small: { values: ['draft', 'published'], title: 'title', label: '' },
      items: { values: ['draft', 'published'], title: 'title', label: '' },
    }
    let ok = true
    for (const [what, bodyOf] of Object.entries(changes)) {
      const small: number[] = []
      const large: number[] = []
      for (let i = 0; i < tries; i++) {
        small.push(await timed(plinth.url, token, 'small', bodyOf(shapes.small!)))
        large.push(await timed(plinth.url, token, 'items', bodyOf(shapes.items!)))
      }
      const metadata = what !== 'rename a field'
      const met = median(large) < targetMs
      if (metadata) ok &&= met
      console.log(
        `schema: ${what}, ${rows.toLocaleString('en-US')} rows ${median(large).toFixed(1)} ms ` +
          `vs ${smallRows.toLocaleString('en-US')} rows ${median(small).toFixed(1)} ms (medians of ${large.length}); ` +
          `ratio ${(median(large) / median(small)).toFixed(2)}` +
          (metadata ? `; target < ${targetMs} ms ${met ? 'OK' : 'ABOVE TARGET'}` : ''),
      )
    }
    return { ok }
  } finally {
    await plinth.stop()
  }
}
