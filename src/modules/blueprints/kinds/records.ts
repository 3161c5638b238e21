import { referencesIn } from '../document/compile.js'
import { defineBrickKind, type StaticCheckContext } from './define.js'
import { holdsLateBound } from './refs.js'

/** The most rows one records brick seeds. */
export const maxSeedRows = 200

/** The natural-key columns tried, in order, when a records brick names none. */
export const defaultKeyColumns = ['slug', 'name', 'title'] as const

/**
 * Seed records: `{ collection, key?, rows }`. Each row is found again by its natural key, so every row has
 * one and no two share it; rows have the same columns; at most 200; no late-bound references and no secret
 * parameters (a seed is stored as written, and a secret never is).
 */
export const recordsKind = defineBrickKind({
  kind: 'records',
  label: 'seed records',
  namedBy: null,
  staticCheck(body, ctx) {
    if (typeof body.collection !== 'string' || body.collection === '')
      ctx.error('brick.invalid_body', 'a records brick names its collection')
    const rows = body.rows
    if (!Array.isArray(rows) || !rows.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
      ctx.error('brick.invalid_body', 'a records brick has rows: a list of objects')
      return
    }
    if (body.key !== undefined && (typeof body.key !== 'string' || body.key === '')) {
      ctx.error('brick.invalid_body', 'key names the natural-key column')
      return
    }
    if (rows.length > maxSeedRows) {
      ctx.error('brick.too_many_rows', `a records brick seeds at most ${maxSeedRows} rows; this one has ${rows.length}`)
      return
    }
    checkRows(rows as Record<string, unknown>[], body.key as string | undefined, ctx)
    if (holdsLateBound(rows))
      ctx.error('brick.late_bound_ref', 'seed rows hold literal values: an @ref value is refused')
    const secrets = new Set(ctx.params.filter((p) => p.type === 'secret').map((p) => p.name))
    if (rowsNameSecret(rows, secrets))
      ctx.error('brick.secret_in_seed', 'seed rows may not hold secret parameters: a seed is stored as written')
  },
})

function checkRows(rows: readonly Record<string, unknown>[], key: string | undefined, ctx: StaticCheckContext): void {
  const first = rows[0]
  if (!first) return
  const columns = Object.keys(first).sort().join('\u0000')
  const ragged = rows.findIndex((row) => Object.keys(row).sort().join('\u0000') !== columns)
  if (ragged >= 0) {
    ctx.error('brick.ragged_rows', `row ${ragged} has other columns than row 0: every row has the same columns`)
    return
  }
  const column = key ?? defaultKeyColumns.find((c) => Object.hasOwn(first, c))
  if (column === undefined || !Object.hasOwn(first, column)) {
    const named =
      key === undefined ? `no key is named and no row has ${defaultKeyColumns.join(', ')}` : `no row has ${key}`
    ctx.error('brick.no_row_identity', `rows are found again by a natural key: ${named}`)
    return
  }
  const seen = new Map<string, number>()
  for (const [i, row] of rows.entries()) {
    const value = row[column]
    if (value === null || value === '' || (typeof value !== 'string' && typeof value !== 'number')) {
      ctx.error('brick.no_row_identity', `row ${i} has no ${column} (its natural key): a string or a number`)
      return
    }
    const identity = `${typeof value}:${value}`
    const earlier = seen.get(identity)
    if (earlier !== undefined) {
      ctx.error('brick.duplicate_row_identity', `rows ${earlier} and ${i} share the ${column} ${JSON.stringify(value)}`)
      return
    }
    seen.set(identity, i)
  }
}

/** Whether any string in the rows names a secret parameter or holds a secret placeholder. */
function rowsNameSecret(rows: readonly unknown[], secrets: ReadonlySet<string>): boolean {
  const stack: unknown[] = [...rows]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item === 'string') {
      if (item.includes('${secret:') || referencesIn(item).some((name) => secrets.has(name))) return true
    } else if (Array.isArray(item)) for (const element of item) stack.push(element)
    else if (item !== null && typeof item === 'object') for (const child of Object.values(item)) stack.push(child)
  }
  return false
}
